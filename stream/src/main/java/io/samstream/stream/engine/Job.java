package io.samstream.stream.engine;

import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.tensor.Tensor;
import java.util.List;

/** A frame on its way through the pipeline, with the stream it belongs to. */
record Job(StreamHandle stream, VideoFrame frame) {
    /** A batch after the encoder: one embedding per job, or the error that failed the batch. */
    record Encoded(List<Job> jobs, List<Tensor> embeddings, Throwable error) {}

    /** A frame after decoding: its record, or null when the frame is discarded (its stream failed). */
    record Outcome(Job job, MaskRecord record) {}
}
