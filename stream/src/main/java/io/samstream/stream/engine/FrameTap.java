package io.samstream.stream.engine;

import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.video.VideoFrame;

/**
 * Sees every published frame of the engine with its record, on the pipeline's last stage, before the frame's memory
 * is let go (the HTTP server's live figures and previews of watched streams). It runs on the pipeline's thread: it
 * must return at once and never block.
 */
@FunctionalInterface
public interface FrameTap {
    /** Takes nothing: the frame is released at once. */
    FrameTap NONE = (stream, record, frame) -> false;

    /**
     * A frame's record was published (every sink acknowledged it).
     *
     * @return true when the tap keeps the frame: it then owns it and must {@link VideoFrame#release} it (soon: a GPU
     *         frame holds a decoder buffer); false: the engine releases it now
     */
    boolean published(StreamHandle stream, MaskRecord record, VideoFrame frame);
}
