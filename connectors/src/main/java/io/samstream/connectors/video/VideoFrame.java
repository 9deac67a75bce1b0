package io.samstream.connectors.video;

import java.time.Instant;

/**
 * One decoded frame of one stream, as 8-bit RGB in host memory (rows top to bottom, pixels interleaved
 * R,G,B), whatever the source's codec and pixel format were; or, from NVDEC with GPU frames on, as YUV
 * planes in GPU memory ({@link DevicePicture}), whose RGB is downloaded only when asked ({@link #rgb}).
 *
 * @param streamId   the stream it belongs to
 * @param index      0, 1, 2, ... in decode order within the stream (after any restart it goes on counting)
 * @param ptsMillis  presentation time in the source's own timeline, milliseconds
 * @param capturedAt when the frame entered samstream (decode time for files, arrival for live sources):
 *                   the start of the capture-to-ack latency
 * @param width      pixels
 * @param height     pixels
 * @param rgb        {@code 3 * width * height} bytes; null when the frame is on the GPU
 * @param device     the frame on the GPU, or null
 */
public record VideoFrame(String streamId, long index, long ptsMillis, Instant capturedAt, int width, int height,
        byte[] rgb, DevicePicture device) {
    /** A frame in host memory. */
    public VideoFrame(String streamId, long index, long ptsMillis, Instant capturedAt, int width, int height,
            byte[] rgb) {
        this(streamId, index, ptsMillis, capturedAt, width, height, rgb, null);
    }

    /** The same frame renumbered (the engine's per-stream sequence). */
    public VideoFrame withIndex(String stream, long newIndex) {
        return new VideoFrame(stream, newIndex, ptsMillis, capturedAt, width, height, rgb, device);
    }

    /** The RGB bytes: a GPU frame's are downloaded at the first call ({@link DevicePicture#rgb}). */
    public byte[] rgb() {
        return rgb != null ? rgb : device.rgb();
    }

    /** Lets a GPU frame's memory go (nothing for a host frame). */
    public void release() {
        if (device != null) {
            device.release();
        }
    }

    public VideoFrame {
        if (rgb == null && device == null) {
            throw new IllegalArgumentException(streamId + ": a frame needs its RGB bytes or its GPU picture");
        }
        if (device != null && (device.width() != width || device.height() != height)) {
            throw new IllegalArgumentException(streamId + ": the GPU picture is " + device.width() + "x"
                    + device.height() + ", the frame " + width + "x" + height);
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
