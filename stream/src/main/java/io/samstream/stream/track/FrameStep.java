package io.samstream.stream.track;

import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.EmbeddingPool;
import io.samstream.gpu.model.SamBackend;
import java.util.List;

/**
 * One frame's decoding in three steps, so that the frames of a wave (the k-th frame of every stream in a
 * micro-batch) share one decoder call and one post-processing call ({@link Wave}): the prompts to decode,
 * a choice among the decoder's outputs, the appearance of the chosen masks (one pooling call per wave),
 * then the records' objects from the post-processed masks. The steps are called in this order, once
 * each, on one thread.
 */
public interface FrameStep {
    /** The prompt sets to decode against the frame's embedding (may be empty). */
    List<SamBackend.DecodeRequest> requests();

    /** The outputs of {@link #requests}, one list per request: chooses one mask per object. */
    void decoded(List<List<DecoderOutput>> outputs);

    /** What to pool for the chosen masks' appearance ({@link SamBackend#poolEmbeddings}); none by default. */
    default List<EmbeddingPool.Request> pools() {
        return List.of();
    }

    /** The descriptors of {@link #pools}, in order (only called when it asked for some). */
    default void pooled(List<float[]> descriptors) {}

    /** The chosen masks to post-process, with the frame's geometry; null when there are none. */
    SamBackend.MaskRequest masks();

    /** The summaries of {@link #masks}'s planes (empty when it had none): the frame's objects and lost ids. */
    TrackedFrame finish(List<MaskSummary> summaries);
}
