package io.samstream.gpu.model;

/**
 * Matches each of a stream's image embeddings against the one before it under small shifts: how the whole image
 * moved between two frames (the tracker's camera motion). One per stream, frames in order; {@link
 * SamBackend#embeddingMatcher} makes one where the backend keeps its embeddings.
 */
public interface EmbeddingMatcher extends AutoCloseable {
    /** The largest shift tried, in embedding cells, either way on each axis. */
    int range();

    /**
     * The mean cosine similarity between the previous embedding's cells and this one's cells {@code (dx, dy)} away,
     * for every shift with {@code |dx|, |dy| <= range()}, over the first {@code cols x rows} cells (the image; the
     * rest of the embedding is padding) whose shifted cell is also among them: {@code scores[(dy + range) * (2 range
     * + 1) + dx + range]}. This embedding then becomes the previous one.
     *
     * @return null for the first embedding, after the image size changed, or once closed
     * @throws IllegalArgumentException when cols or rows lie outside the embedding
     */
    double[] match(ImageEmbedding embedding, int cols, int rows);

    /** Frees what it holds (a device copy of the previous embedding on the CUDA backend). */
    @Override
    void close();
}
