package io.samstream.connectors.video;

import java.time.Instant;

/**
 * One decoded frame of one stream, as 8-bit RGB in host memory (rows top to bottom, pixels interleaved
 * R,G,B), whatever the source's codec and pixel format were; or, for a GPU backend, as YUV planes: in GPU
 * memory from NVDEC ({@link DevicePicture}, its RGB downloaded only when asked), or a CPU decoder's 4:2:0
 * planes in host memory ({@link HostYuvPicture}, uploaded as they are; its RGB converted only when asked).
 *
 * @param streamId   the stream it belongs to
 * @param index      0, 1, 2, ... in decode order within the stream (after any restart it goes on counting)
 * @param ptsMillis  presentation time in the source's own timeline, milliseconds
 * @param capturedAt when the frame entered samstream (decode time for files, arrival for live sources):
 *                   the start of the capture-to-ack latency
 * @param width      pixels
 * @param height     pixels
 * @param rgb        {@code 3 * width * height} bytes; null when the frame comes as YUV planes
 * @param device     the frame on the GPU, or null
 * @param hostYuv    the frame's YUV planes in host memory, or null
 */
public record VideoFrame(String streamId, long index, long ptsMillis, Instant capturedAt, int width, int height,
        byte[] rgb, DevicePicture device, HostYuvPicture hostYuv) {
    /** A frame in host memory. */
    public VideoFrame(String streamId, long index, long ptsMillis, Instant capturedAt, int width, int height,
            byte[] rgb) {
        this(streamId, index, ptsMillis, capturedAt, width, height, rgb, null, null);
    }

    /** The same frame renumbered (the engine's per-stream sequence). */
    public VideoFrame withIndex(String stream, long newIndex) {
        return new VideoFrame(stream, newIndex, ptsMillis, capturedAt, width, height, rgb, device, hostYuv);
    }

    /**
     * The RGB bytes: a GPU frame's are downloaded ({@link DevicePicture#rgb}), host YUV planes converted
     * ({@link HostYuvPicture#rgb}), at the first call.
     */
    public byte[] rgb() {
        return rgb != null ? rgb : device != null ? device.rgb() : hostYuv.rgb();
    }

    /** Lets a YUV frame's decoder buffers go (nothing for an RGB frame). */
    public void release() {
        if (device != null) {
            device.release();
        }
        if (hostYuv != null) {
            hostYuv.release();
        }
    }

    public VideoFrame {
        if ((rgb != null ? 1 : 0) + (device != null ? 1 : 0) + (hostYuv != null ? 1 : 0) != 1) {
            throw new IllegalArgumentException(streamId + ": a frame needs exactly one of its RGB bytes, its GPU picture"
                    + " and its host YUV planes");
        }
        if (device != null && (device.width() != width || device.height() != height)) {
            throw new IllegalArgumentException(streamId + ": the GPU picture is " + device.width() + "x"
                    + device.height() + ", the frame " + width + "x" + height);
        }
        if (hostYuv != null && (hostYuv.width() != width || hostYuv.height() != height)) {
            throw new IllegalArgumentException(streamId + ": the YUV picture is " + hostYuv.width() + "x"
                    + hostYuv.height() + ", the frame " + width + "x" + height);
        }
        if (width <= 0 || height <= 0) {
            throw new IllegalArgumentException(streamId + ": frame size must be positive, got " + width + "x" + height);
        }
        if (rgb != null && rgb.length != 3L * width * height) {
            throw new IllegalArgumentException(streamId + ": RGB buffer of " + rgb.length + " bytes does not hold a "
                    + width + "x" + height + " frame");
        }
    }
}
