package io.samstream.gpu.sparse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class TwoFourWeightsTest {
    private static float[] pruned(int n, int k, long seed) {
        Random r = new Random(seed);
        float[] w = new float[n * k];
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) r.nextGaussian();
        }
        return TwoFourPruning.prune(w, n, k, "w");
    }

    @ParameterizedTest
    @CsvSource({"16,64", "1,4", "7,12", "33,100", "48,96", "130,260", "64,768"})
    void compressThenDecodeGivesThePrunedWeights(int n, int k) {
        float[] p = pruned(n, k, n * 31L + k);
        TwoFourWeights c = TwoFourWeights.compress(p, n, k, "w");
        assertEquals((n + 15) / 16 * 16, c.rowsPadded());
        assertEquals((k + 63) / 64 * 64, c.kPadded());
        assertEquals(c.rowsPadded() * c.kPadded() / 2, c.values().length);
        assertEquals(c.rowsPadded() / 16 * (c.kPadded() / 32) * 16, c.metadata().length);
        assertArrayEquals(p, c.decompress());
    }

    @Test
    void metadataFollowsTheMmaSpRegisterLayout() {
        // One 16 x 32 block (one m16n8k32 step): row r keeps positions (r % 3, 3) of every group, except
        // row 9 whose group 5 (k 20..23) keeps positions 1 and 2.
        int n = 16, k = 32;
        float[] w = new float[n * k];
        for (int r = 0; r < n; r++) {
            for (int c = 0; c < 8; c++) {
                int i0 = r % 3, i1 = 3;
                if (r == 9 && c == 5) {
                    i0 = 1;
                    i1 = 2;
                }
                w[r * k + 4 * c + i0] = 1 + r + c;
                w[r * k + 4 * c + i1] = -(1 + r + c);
            }
        }
        TwoFourWeights c = TwoFourWeights.compress(w, n, k, "w");
        int[] meta = c.metadata();
        // Lane 4g + t of a warp passes word 2g + t: row g in bits 0..15, row g + 8 in bits 16..31, both for
        // k = 16t .. 16t + 15 of the step; four 4-bit codes i0 | i1 << 2 per row, group 0 lowest.
        for (int g = 0; g < 8; g++) {
            for (int t = 0; t < 2; t++) {
                int word = meta[2 * g + t];
                for (int half = 0; half < 2; half++) {
                    int row = g + 8 * half;
                    for (int q = 0; q < 4; q++) {
                        int group = 4 * t + q;
                        int expected = (row == 9 && group == 5) ? (1 | 2 << 2) : (row % 3 | 3 << 2);
                        assertEquals(expected, (word >>> (16 * half + 4 * q)) & 0xF,
                                "row " + row + " group " + group);
                    }
                }
            }
        }
        // The second k32 step of the padded k (64) is padding: zero values, code 0b0100 (positions 0, 1).
        for (int i = 16; i < 32; i++) {
            assertEquals(0x44444444, meta[i], "padding word " + i);
        }
        assertEquals(1f, c.values()[0]);          // row 0, group 0 keeps positions 0 and 3: 1, -1
        assertEquals(-1f, c.values()[1]);
        assertEquals(0f, c.values()[16]);         // k 32.. is padding
        assertEquals(15f, c.values()[9 * 32 + 10]); // row 9, group 5: 1 + 9 + 5 at position 1
        assertEquals(-15f, c.values()[9 * 32 + 11]); // and its negation at position 2
    }

    @Test
    void refusesDenseGroupsAndBadShapes() {
        float[] w = pruned(4, 8, 3);
        w[5] = w[6] = w[7] = w[4] = 1f;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TwoFourWeights.compress(w, 4, 8, "blocks.1.attn.qkv.weight"));
        assertTrue(e.getMessage().contains("blocks.1.attn.qkv.weight") && e.getMessage().contains("row 0, k 4..7")
                && e.getMessage().contains("4 non-zeros"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TwoFourWeights.compress(new float[10], 2, 5, "w"));
        assertTrue(e.getMessage().contains("multiple of 4"), e.getMessage());
    }
}
