package io.samstream.gpu.model;

import io.samstream.gpu.tensor.Tensor;

/**
 * One image's embedding, wherever the backend keeps it: a host tensor (CPU) or a slot of a device ring
 * (CUDA), so that the engine's decoder, tracker and discovery read it in place instead of copying it.
 *
 * <p>Reference counted: whoever gets one from {@link SamBackend#embedFrames} holds one reference and
 * {@link #close()}s it when done; a second reader takes its own with {@link #retain()}. The storage is
 * recycled when the last reference is closed (a CUDA slot goes back to its ring, which is what bounds
 * the embeddings in flight). Closing more often than retained is an error.
 */
public interface ImageEmbedding extends AutoCloseable {
    /** The embedding {@code [1, C, E, E]} on the host, fp32 (a CUDA slot is downloaded: for tools, not the engine). */
    Tensor toTensor();

    /** One more reference to the same storage; returns this. */
    ImageEmbedding retain();

    /** Gives this reference back. */
    @Override
    void close();

    /** A host tensor {@code [1, C, E, E]} as an embedding (nothing to recycle). */
    static ImageEmbedding of(Tensor embedding) {
        return new HostEmbedding(embedding);
    }
}
