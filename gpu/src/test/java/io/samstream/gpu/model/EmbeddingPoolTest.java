package io.samstream.gpu.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.tensor.Tensor;
import org.junit.jupiter.api.Test;

class EmbeddingPoolTest {
    /** [1, 2, 2, 2]: channel 0 = 1, 2, 3, 4 by cell; channel 1 = 10 everywhere. */
    static final Tensor EMBEDDING = new Tensor(new float[] {1, 2, 3, 4, 10, 10, 10, 10}, 1, 2, 2, 2);

    @Test
    void meansUnderWeights() {
        assertArrayEquals(new float[] {2.5f, 10}, EmbeddingPool.pool(EMBEDDING, new float[] {1, 1, 1, 1}));
        // Half of cell 0, all of cell 3: (0.5 * 1 + 4) / 1.5.
        assertArrayEquals(new float[] {3f, 10}, EmbeddingPool.pool(EMBEDDING, new float[] {0.5f, 0, 0, 1}), 1e-6f);
        assertNull(EmbeddingPool.pool(EMBEDDING, new float[4]), "no cell, no appearance");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> EmbeddingPool.pool(EMBEDDING, new float[3]));
        assertTrue(e.getMessage().contains("3 values"), e.getMessage());
    }

    @Test
    void similarityAgainstTheImage() {
        float[] g = {0, 0};
        float[] m = {1, 0};
        assertEquals(1, EmbeddingPool.similarity(m, m, g), 1e-12);
        assertEquals(0, EmbeddingPool.similarity(g, m, g), 1e-12, "looks like the image as a whole");
        assertEquals(-1, EmbeddingPool.similarity(new float[] {-1, 0}, m, g), 1e-12);
        // A fifth of the object's contrast: 2a / (1 + a^2).
        assertEquals(0.4 / 1.04, EmbeddingPool.similarity(new float[] {0.2f, 0}, m, g), 1e-6);
        assertEquals(0, EmbeddingPool.similarity(new float[] {0, 1}, m, g), 1e-12, "another direction");
        assertEquals(0, EmbeddingPool.similarity(null, m, g));
    }

    @Test
    void appearanceMapIsTheSimilarityOfEachWindowsMean() {
        java.util.SplittableRandom r = new java.util.SplittableRandom(7);
        int c = 5;
        int e = 6;
        float[] data = new float[c * e * e];
        for (int i = 0; i < data.length; i++) {
            data[i] = (float) r.nextDouble(-1, 1);
        }
        Tensor emb = new Tensor(data, 1, c, e, e);
        float[] look = {1, -0.5f, 0.25f, 0, 2};
        float[] mean = {0.1f, 0, -0.1f, 0.2f, 0};
        int cols = 5;
        int rows = 4; // the sixth column and the last two rows are padding
        for (int[] w : new int[][] {{1, 1}, {2, 3}, {3, 3}, {9, 1}}) {
            float[] map = EmbeddingPool.cellSimilarity(emb, look, mean, cols, rows, w[0], w[1]);
            assertEquals(cols * rows, map.length);
            for (int y = 0; y < rows; y++) {
                for (int x = 0; x < cols; x++) {
                    // The window pooled with weights 1 (clipped to the image), then compared.
                    float[] weights = new float[e * e];
                    for (int v = EmbeddingPool.windowStart(y, w[1]); v <= EmbeddingPool.windowEnd(y, w[1], rows); v++) {
                        for (int u = EmbeddingPool.windowStart(x, w[0]); u <= EmbeddingPool.windowEnd(x, w[0], cols);
                                u++) {
                            weights[v * e + u] = 1;
                        }
                    }
                    double want = EmbeddingPool.similarity(EmbeddingPool.pool(emb, weights), look, mean);
                    assertEquals(want, map[y * cols + x], 1e-5, "window " + w[0] + "x" + w[1] + ", cell " + x + "," + y);
                }
            }
        }
        // Windows of 2: the cell and the next one; of 3: one either side.
        assertEquals(3, EmbeddingPool.windowStart(3, 2));
        assertEquals(4, EmbeddingPool.windowEnd(3, 2, 5));
        assertEquals(2, EmbeddingPool.windowStart(3, 3));
        assertEquals(4, EmbeddingPool.windowEnd(4, 3, 5), "clipped to the image");
        assertThrows(IllegalArgumentException.class, () -> EmbeddingPool.cellSimilarity(emb, look, mean, 7, 2, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> EmbeddingPool.cellSimilarity(emb, new float[2], new float[2],
                2, 2, 1, 1));
    }
}
