package io.samstream.stream.engine;

import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.stream.track.TrackedFrame;
import java.util.List;

/**
 * A frame on its way through the pipeline, with the stream it belongs to; in memory mode also the frame resized to the
 * model's input ahead of the model's stage ({@link MemoryStage#inputs}), or null where that was not done.
 */
record Job(StreamHandle stream, VideoFrame frame, byte[] modelInput) {
    Job(StreamHandle stream, VideoFrame frame) {
        this(stream, frame, null);
    }

    /**
     * A batch after the encoder: one embedding per job (null for a job whose stream failed), or the error that
     * failed the batch. The decoder closes the embeddings when the batch is decoded.
     */
    record Encoded(List<Job> jobs, List<ImageEmbedding> embeddings, Throwable error) {}

    /**
     * A frame after decoding: its objects and lost ids (their records not yet run-length encoded), or null when
     * the frame is discarded (its stream failed).
     */
    record Decoded(Job job, TrackedFrame frame) {}

    /** A frame after decoding: its record, or null when the frame is discarded (its stream failed). */
    record Outcome(Job job, MaskRecord record) {}
}
