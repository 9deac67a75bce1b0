package io.samstream.gpu.image;

import java.nio.ByteBuffer;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A CPU decoder's 8-bit YUV 4:2:0 frame in host memory, planes as they came: a GPU backend uploads the planes
 * (half the bytes of RGB) and converts them on the device with NVDEC's conversion; everything else asks for
 * {@link #toRgb}.
 *
 * @param planes    writes the planes at the buffer's position, I420 order and tightly packed: luma
 *                  {@code width x height}, then Cb and Cr, {@code ceil(width / 2) x ceil(height / 2)} each
 *                  ({@link #planeBytes} in all)
 * @param kr        the matrix's luma weight of red (0.2126 for BT.709, 0.299 for BT.601)
 * @param kb        the matrix's luma weight of blue
 * @param fullRange full-range samples; else limited (luma 16-235, chroma 16-240)
 * @param hostRgb   the frame's 8-bit RGB, converted on the host when asked
 */
public record HostYuvImage(int width, int height, Consumer<ByteBuffer> planes, float kr, float kb, boolean fullRange,
        Supplier<byte[]> hostRgb) implements FrameImage {
    public HostYuvImage {
        if (width <= 0 || height <= 0) {
            throw new IllegalArgumentException("image size must be positive, got " + width + "x" + height);
        }
        if (!(kr > 0 && kb > 0 && kr + kb < 1)) {
            throw new IllegalArgumentException("colour matrix weights kr " + kr + ", kb " + kb + " are not a YUV matrix");
        }
    }

    /** Bytes of the three planes. */
    public long planeBytes() {
        return (long) width * height + 2L * chromaWidth() * chromaHeight();
    }

    public int chromaWidth() {
        return (width + 1) / 2;
    }

    public int chromaHeight() {
        return (height + 1) / 2;
    }

    @Override
    public RgbImage toRgb() {
        return new RgbImage(width, height, hostRgb.get());
    }
}
