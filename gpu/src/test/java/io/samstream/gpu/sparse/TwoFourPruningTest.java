package io.samstream.gpu.sparse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class TwoFourPruningTest {
    private static float[] random(int n, long seed) {
        Random r = new Random(seed);
        float[] w = new float[n];
        for (int i = 0; i < n; i++) {
            w[i] = (float) r.nextGaussian();
        }
        return w;
    }

    @Test
    void keepsExactlyTheTwoLargestMagnitudesOfEveryFour() {
        int n = 7, k = 36;
        float[] w = random(n * k, 1);
        float[] p = TwoFourPruning.prune(w, n, k, "w");
        for (int g = 0; g < w.length; g += 4) {
            Integer[] order = {0, 1, 2, 3};
            final int base = g;
            Arrays.sort(order, (a, b) -> Float.compare(Math.abs(w[base + b]), Math.abs(w[base + a])));
            int kept = 0;
            for (int j = 0; j < 4; j++) {
                boolean largest = j == order[0] || j == order[1];
                assertEquals(largest ? w[g + j] : 0f, p[g + j], "group at " + g + ", position " + j);
                kept += p[g + j] != 0f ? 1 : 0;
            }
            assertEquals(2, kept, "group at " + g);
        }
        assertTrue(TwoFourPruning.satisfies(p, n, k, "w"));
        assertFalse(TwoFourPruning.satisfies(w, n, k, "w"));
    }

    @Test
    void tiesKeepTheLowerPositionsAndPruningIsIdempotent() {
        float[] w = {1f, -1f, 1f, 1f, 0f, 0f, 0f, 0f, 2f, -3f, 3f, 0.5f, 0f, -0f, 5f, 0f};
        float[] p = TwoFourPruning.prune(w, 1, 16, "w");
        assertArrayEquals(new float[] {1f, -1f, 0f, 0f, 0f, 0f, 0f, 0f, 0f, -3f, 3f, 0f, 0f, 0f, 5f, 0f}, p);
        assertArrayEquals(p, TwoFourPruning.prune(p, 1, 16, "w"));
        float[] q = TwoFourPruning.prune(random(64 * 32, 2), 64, 32, "w");
        assertArrayEquals(q, TwoFourPruning.prune(q, 64, 32, "w"));
        assertEquals(0b0100, TwoFourPruning.keptPair(w, 0, "w"));
        assertEquals(0b1001, TwoFourPruning.keptPair(w, 8, "w"));
        assertEquals(0b1000, TwoFourPruning.keptPair(w, 12, "w"));   // 5 at 2, then the first zero (0 beats -0 by position)
    }

    @Test
    void badShapesAndNaNAreNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TwoFourPruning.prune(new float[6], 1, 6, "blocks.0.mlp.lin1.weight"));
        assertTrue(e.getMessage().contains("blocks.0.mlp.lin1.weight") && e.getMessage().contains("multiple of 4"),
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TwoFourPruning.prune(new float[7], 2, 4, "w"));
        assertTrue(e.getMessage().contains("7 values for shape [2, 4]"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TwoFourPruning.prune(new float[0], 0, 4, "w"));
        assertTrue(e.getMessage().contains("positive"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> TwoFourPruning.prune(new float[] {1f, Float.NaN, 0f, 0f}, 1, 4, "w"));
        assertTrue(e.getMessage().contains("NaN"), e.getMessage());
    }
}
