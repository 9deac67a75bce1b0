package io.samstream.gpu.sam3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Attention's folded path (projections folded into few queries) against the projected path. */
class AttentionFoldTest {
    @Test
    void foldsOnlyFewQueriesOverManyKeys() {
        assertTrue(Attention.folds(1, 72 * 72, 256, 8)); // the geometry encoder's class token
        assertTrue(Attention.folds(4, 72 * 72, 256, 8)); // and three boxes
        assertFalse(Attention.folds(201, 72 * 72, 256, 8)); // the decoder's queries
        assertFalse(Attention.folds(201, 33, 256, 8)); // the decoder's text attention
        assertFalse(Attention.folds(72 * 72, 33, 256, 8)); // the fusion encoder's
        for (int n : new int[] {1, 4, 32, 5184}) {
            assertFalse(Attention.folds(n, n, 256, 8), "self-attention of " + n);
            assertFalse(Attention.folds(n, n, 1024, 16), "text self-attention of " + n);
        }
    }

    @Test
    void releaseWidthsMatchTheProjectedPath() {
        Attention att = attention(256, 8, 11);
        int nk = 72 * 72;
        Random rnd = new Random(12);
        for (int nq : new int[] {1, 4}) {
            check(att, 256, 8, nq, nk, rnd, false, false, false);
            check(att, 256, 8, nq, nk, rnd, true, false, false);
        }
    }

    @Test
    void smallWidthsMatchTheProjectedPathWithEveryMask() {
        Attention att = attention(32, 4, 21);
        Random rnd = new Random(22);
        for (int nq : new int[] {1, 3}) {
            for (int mask = 0; mask < 8; mask++) {
                check(att, 32, 4, nq, 50, rnd, (mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0);
            }
        }
    }

    @Test
    void forwardTakesTheFoldWhereTheRuleSays() {
        Attention att = attention(32, 4, 31);
        Random rnd = new Random(32);
        try (CpuThreadPool pool = new CpuThreadPool(2)) {
            for (int[] shape : new int[][] {{2, 400}, {40, 40}}) {
                int nq = shape[0], nk = shape[1];
                float[] query = gaussian(rnd, nq * 32), key = gaussian(rnd, nk * 32), value = gaussian(rnd, nk * 32);
                float[] want = Attention.folds(nq, nk, 32, 4)
                        ? att.folded(pool, query, nq, key, value, nk, null, false, null)
                        : att.projected(pool, query, nq, key, value, nk, null, false, null);
                assertArrayEquals(want, att.forward(pool, query, nq, key, value, nk), 0f);
            }
        }
        assertTrue(Attention.folds(2, 400, 32, 4));
        assertFalse(Attention.folds(40, 40, 32, 4));
    }

    /** Compares the two paths on one random case: keys unlike values (memory + position), key padding, bias. */
    private static void check(Attention att, int dim, int heads, int nq, int nk, Random rnd, boolean padding,
            boolean bias, boolean causal) {
        float[] query = gaussian(rnd, nq * dim);
        float[] key = gaussian(rnd, nk * dim);
        float[] value = gaussian(rnd, nk * dim);
        boolean[] pad = null;
        if (padding) {
            pad = new boolean[nk];
            for (int t = 1; t < nk; t++) {
                pad[t] = rnd.nextFloat() < 0.3f; // key 0 stays, so every query (causal too) sees one
            }
        }
        float[] b = bias ? gaussian(rnd, heads * nq * nk) : null;
        String label = dim + " wide, " + nq + " queries, " + nk + " keys, padding " + padding + ", bias " + bias
                + ", causal " + causal;
        try (CpuThreadPool pool = new CpuThreadPool(2)) {
            float[] want = att.projected(pool, query, nq, key, value, nk, b, causal, pad);
            float[] got = att.folded(pool, query, nq, key, value, nk, b, causal, pad);
            assertEquals(want.length, got.length, label);
            double err = 0;
            double norm = 0;
            for (int i = 0; i < want.length; i++) {
                err += (got[i] - want[i]) * (double) (got[i] - want[i]);
                norm += want[i] * (double) want[i];
            }
            double relative = Math.sqrt(err / norm);
            assertTrue(relative < 1e-5, label + ": relative error " + relative);
            if (padding) {
                // a padded key's value must not leak in: changing it changes nothing
                int t = firstPadded(pad);
                float[] changed = value.clone();
                for (int c = 0; c < dim; c++) {
                    changed[t * dim + c] += 100f;
                }
                assertArrayEquals(got, att.folded(pool, query, nq, key, changed, nk, b, causal, pad), 0f, label);
            }
        }
    }

    private static int firstPadded(boolean[] pad) {
        for (int t = 0; t < pad.length; t++) {
            if (pad[t]) {
                return t;
            }
        }
        throw new AssertionError("no padded key");
    }

    private static Attention attention(int dim, int heads, long seed) {
        Random rnd = new Random(seed);
        Map<String, Tensor> map = new LinkedHashMap<>();
        // N(0, 1/fan-in) weights; biases of order 1 so that the dropped q·b_k and the moved b_v matter
        map.put("a.in_proj_weight", tensor(rnd, 1 / Math.sqrt(dim), 3 * dim, dim));
        map.put("a.in_proj_bias", tensor(rnd, 1, 3 * dim));
        map.put("a.out_proj.weight", tensor(rnd, 1 / Math.sqrt(dim), dim, dim));
        map.put("a.out_proj.bias", tensor(rnd, 1, dim));
        return Attention.load(new StateDict(Path.of("attention-fold.pt"), map), "a", dim, heads);
    }

    private static Tensor tensor(Random rnd, double std, int... shape) {
        float[] v = new float[Math.toIntExact(Tensor.numel(shape))];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) (rnd.nextGaussian() * std);
        }
        return new Tensor(v, shape);
    }

    private static float[] gaussian(Random rnd, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) rnd.nextGaussian();
        }
        return v;
    }
}
