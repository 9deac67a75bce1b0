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
}
