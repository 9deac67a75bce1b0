package io.samstream.gpu.cpu;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The windowed / global attention with decomposed relative position bias against a direct computation
 * that follows the reference literally: zero-padded window partition, qkv on every padded token, the full
 * score matrix with rel_h and rel_w added, softmax, unpartition, proj.
 */
class EncoderAttentionTest {
    private static final int DIM = 8;
    private static final int HEADS = 2;

    @Test
    void windowedWithPaddingMatchesDirectComputation() {
        check(9, WindowGrid.windowed(9, 9, 4), 7, 1);
    }

    @Test
    void globalOverSeveralQueryBlocksMatchesDirectComputation() {
        check(9, WindowGrid.global(9, 9), 17, 4);
    }

    @Test
    void storedTableOfAnotherLengthIsInterpolated() {
        // window 3 needs 5 rows; store 9 and let both sides resize it
        check(6, WindowGrid.windowed(6, 6, 3), 9, 3);
    }

    private void check(int side, WindowGrid grid, int tableLength, int threads) {
        Random rnd = new Random(side * 31L + tableLength);
        int headDim = DIM / HEADS;
        int tokens = side * side;
        float[] x = TinySam.random(rnd, tokens * DIM, 1);
        float[] qkvW = TinySam.random(rnd, 3 * DIM * DIM, 0.5);
        float[] qkvB = TinySam.random(rnd, 3 * DIM, 0.5);
        float[] projW = TinySam.random(rnd, DIM * DIM, 0.5);
        float[] projB = TinySam.random(rnd, DIM, 0.5);
        float[] relH = TinySam.random(rnd, tableLength * headDim, 0.5);
        float[] relW = TinySam.random(rnd, tableLength * headDim, 0.5);
        EncoderAttention attn = new EncoderAttention(qkvW, qkvB, projW, projB, DIM, HEADS, grid, relH,
                tableLength, relW, tableLength);
        float[] actual;
        try (CpuThreadPool pool = new CpuThreadPool(threads)) {
            actual = attn.forward(pool, x, tokens);
        }
        float[] expected = direct(x, grid, qkvW, qkvB, projW, projB, relH, relW, tableLength);
        double d = NaiveOps.maxAbsDiff(expected, actual);
        assertTrue(d < 2e-5, "attention differs by " + d);
    }

    private static float[] direct(float[] x, WindowGrid grid, float[] qkvW, float[] qkvB, float[] projW,
            float[] projB, float[] relH, float[] relW, int tableLength) {
        int ws = grid.windowSize();
        int t = ws * ws;
        int headDim = DIM / HEADS;
        int needed = 2 * ws - 1;
        float[] rh = tableLength == needed ? relH : RelativePosition.resizeLinear(relH, tableLength, headDim, needed);
        float[] rw = tableLength == needed ? relW : RelativePosition.resizeLinear(relW, tableLength, headDim, needed);
        double scale = 1 / Math.sqrt(headDim);
        float[] windows = grid.partition(x, DIM);
        float[] attended = new float[windows.length];
        for (int win = 0; win < grid.windowCount(); win++) {
            float[] qkv = NaiveOps.linear(java.util.Arrays.copyOfRange(windows, win * t * DIM, (win + 1) * t * DIM),
                    t, DIM, qkvW, qkvB, 3 * DIM);
            for (int h = 0; h < HEADS; h++) {
                for (int i = 0; i < t; i++) {
                    double[] scores = new double[t];
                    for (int j = 0; j < t; j++) {
                        double s = 0;
                        double bh = 0;
                        double bw = 0;
                        int rowH = (i / ws) - (j / ws) + ws - 1;
                        int rowW = (i % ws) - (j % ws) + ws - 1;
                        for (int c = 0; c < headDim; c++) {
                            double q = qkv[i * 3 * DIM + h * headDim + c];
                            s += q * scale * qkv[j * 3 * DIM + DIM + h * headDim + c];
                            bh += q * rh[rowH * headDim + c];
                            bw += q * rw[rowW * headDim + c];
                        }
                        scores[j] = s + bh + bw;
                    }
                    NaiveOps.softmax(scores);
                    for (int c = 0; c < headDim; c++) {
                        double o = 0;
                        for (int j = 0; j < t; j++) {
                            o += scores[j] * qkv[j * 3 * DIM + 2 * DIM + h * headDim + c];
                        }
                        attended[(win * t + i) * DIM + h * headDim + c] = (float) o;
                    }
                }
            }
        }
        float[] merged = grid.unpartition(attended, DIM);
        return NaiveOps.linear(merged, merged.length / DIM, DIM, projW, projB, DIM);
    }
}
