package io.samstream.connectors.video;

import java.io.IOException;

/**
 * A blocking supplier of decoded frames for one stream: a file, a network stream, a camera or a
 * generated pattern. Called from one thread at a time (the engine runs each source on a dedicated
 * blocking dispatcher); not thread-safe.
 *
 * <p>{@link #next()} returns {@code null} at the clean end of a finite source (a file). A failure
 * (a corrupt file, a dropped connection) is an {@link IOException} whose message names the stream and
 * the cause; live sources are reopened by the engine with backoff, files are not.
 */
public interface FrameSource extends AutoCloseable {
    /** The next frame, or null at the end of a finite source. Blocks until one is decoded. */
    VideoFrame next() throws IOException;

    /** True for cameras and network streams: frames arrive in real time and may be dropped, never replayed. */
    boolean isLive();

    /**
     * Packets that failed to decode (or decoded with errors concealed) so far and were skipped; 0 for
     * sources that do not decode (a generated pattern). May be read from another thread.
     */
    default int decodeErrors() {
        return 0;
    }

    /** For logs: the stream id, the location and the decoder in use, e.g. "cam-1 rtsp://... (h264_cuvid)". */
    String describe();

    @Override
    void close() throws IOException;
}
