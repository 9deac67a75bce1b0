package io.samstream.gpu.image;

import java.util.function.Supplier;

/**
 * A frame in GPU memory as a hardware decoder leaves it: a luma plane and an interleaved chroma plane at
 * half resolution (NV12; P010 / P016 with 16-bit samples, the value in the high bits), on the CUDA context
 * the backend's kernels use. The planes must stay valid until the backend's work on the frame is done
 * (the engine holds the decoder's frame until the frame's record is out).
 *
 * @param luma        device address of the luma plane
 * @param lumaPitch   bytes from one luma row to the next
 * @param chroma      device address of the chroma plane (U, V interleaved)
 * @param chromaPitch bytes from one chroma row to the next
 * @param sixteenBit  16-bit samples (P010 / P016) instead of bytes
 * @param kr          the matrix's luma weight of red (0.2126 for BT.709, 0.299 for BT.601)
 * @param kb          the matrix's luma weight of blue (0.0722 for BT.709, 0.114 for BT.601)
 * @param fullRange   full-range samples; else limited (luma 16-235, chroma 16-240)
 * @param hostRgb     the frame's 8-bit RGB, downloaded and converted on the host when asked
 */
public record DeviceYuvImage(int width, int height, long luma, int lumaPitch, long chroma, int chromaPitch,
        boolean sixteenBit, float kr, float kb, boolean fullRange, Supplier<byte[]> hostRgb) implements FrameImage {
    public DeviceYuvImage {
        if (width <= 0 || height <= 0) {
            throw new IllegalArgumentException("image size must be positive, got " + width + "x" + height);
        }
        int sample = sixteenBit ? 2 : 1;
        if (lumaPitch < width * sample || chromaPitch < ((width + 1) / 2) * 2 * sample) {
            throw new IllegalArgumentException("plane pitches " + lumaPitch + " / " + chromaPitch + " B are too small for a "
                    + width + " pixel wide " + (sixteenBit ? "16-bit" : "8-bit") + " frame");
        }
        if (luma == 0 || chroma == 0) {
            throw new IllegalArgumentException("a GPU frame needs both plane addresses");
        }
        if (!(kr > 0 && kb > 0 && kr + kb < 1)) {
            throw new IllegalArgumentException("colour matrix weights kr " + kr + ", kb " + kb + " are not a YUV matrix");
        }
    }

    @Override
    public RgbImage toRgb() {
        return new RgbImage(width, height, hostRgb.get());
    }
}
