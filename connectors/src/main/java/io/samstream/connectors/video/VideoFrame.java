package io.samstream.connectors.video;

import java.time.Instant;

/**
 * One decoded frame of one stream, in host memory as 8-bit RGB (rows top to bottom, pixels
 * interleaved R,G,B), whatever the source's codec and pixel format were.
 *
 * @param streamId   the stream it belongs to
 * @param index      0, 1, 2, ... in decode order within the stream (after any restart it goes on counting)
 * @param ptsMillis  presentation time in the source's own timeline, milliseconds
 * @param capturedAt when the frame entered samstream (decode time for files, arrival for live sources):
 *                   the start of the capture-to-ack latency
 * @param width      pixels
 * @param height     pixels
 * @param rgb        {@code 3 * width * height} bytes
 */
public record VideoFrame(String streamId, long index, long ptsMillis, Instant capturedAt, int width, int height,
        byte[] rgb) {
    public VideoFrame {
        if (width <= 0 || height <= 0) {
            throw new IllegalArgumentException(streamId + ": frame size must be positive, got " + width + "x" + height);
        }
        if (rgb.length != 3L * width * height) {
            throw new IllegalArgumentException(streamId + ": RGB buffer of " + rgb.length + " bytes does not hold a "
                    + width + "x" + height + " frame");
        }
    }
}
