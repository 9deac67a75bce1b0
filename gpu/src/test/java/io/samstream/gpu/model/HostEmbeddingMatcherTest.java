package io.samstream.gpu.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.tensor.Tensor;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The camera-motion scores on the host: an image moved by whole cells matches exactly at that shift only. */
class HostEmbeddingMatcherTest {
    static final int C = 8;
    static final int E = 16;

    /** A random texture's embedding [1, C, E, E], its content moved by (dx, dy) cells (new cells from the seed too). */
    static Tensor texture(long seed, int dx, int dy) {
        float[] v = new float[C * E * E];
        for (int y = 0; y < E; y++) {
            for (int x = 0; x < E; x++) {
                SplittableRandom r = new SplittableRandom(seed * 1_000_003L + (x - dx) * 131L + (y - dy));
                for (int c = 0; c < C; c++) {
                    v[c * E * E + y * E + x] = (float) r.nextGaussian();
                }
            }
        }
        return new Tensor(v, 1, C, E, E);
    }

    @Test
    void aMovedImageMatchesBestAtItsShift() {
        HostEmbeddingMatcher m = new HostEmbeddingMatcher(3);
        assertNull(m.match(ImageEmbedding.of(texture(1, 0, 0)), 14, 12), "the first frame has nothing to match");
        double[] s = m.match(ImageEmbedding.of(texture(1, 2, -1)), 14, 12);
        assertEquals(49, s.length);
        int at = (-1 + 3) * 7 + 2 + 3;
        assertEquals(1.0, s[at], 1e-5, "every overlapping cell is the same vector one shift away");
        for (int i = 0; i < s.length; i++) {
            if (i != at) {
                assertTrue(s[i] < 0.5, "shift " + (i % 7 - 3) + "," + (i / 7 - 3) + " scores " + s[i]);
            }
        }
        // The padding (cells past cols x rows) is not read: changing it changes nothing.
        Tensor padded = texture(1, 2, -1);
        for (int c = 0; c < C; c++) {
            padded.data()[c * E * E + 15 * E + 15] = 1e6f;
        }
        HostEmbeddingMatcher n = new HostEmbeddingMatcher(3);
        n.match(ImageEmbedding.of(texture(1, 0, 0)), 14, 12);
        assertEquals(s[at], n.match(ImageEmbedding.of(padded), 14, 12)[at], 1e-9);
    }

    @Test
    void aNewImageSizeStartsOverAndBadSizesAreRefused() {
        HostEmbeddingMatcher m = new HostEmbeddingMatcher(2);
        assertEquals(2, m.range());
        m.match(ImageEmbedding.of(texture(2, 0, 0)), 16, 16);
        assertNull(m.match(ImageEmbedding.of(texture(2, 0, 0)), 16, 9), "other image cells: nothing to compare");
        assertEquals(25, m.match(ImageEmbedding.of(texture(2, 0, 0)), 16, 9).length);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> m.match(ImageEmbedding.of(texture(2, 0, 0)), 17, 9));
        assertTrue(e.getMessage().contains("17x9"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new HostEmbeddingMatcher(0));
        assertThrows(IllegalArgumentException.class,
                () -> m.match(ImageEmbedding.of(new Tensor(new float[C * E * 4], 1, C, E, 4)), 4, 4));
    }
}
