package io.samstream.gpu.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class CpuOpsTest {
    @Test
    void layerNormByHand() {
        // mean 2.5, biased variance 1.25
        float[] x = {1, 2, 3, 4};
        float[] w = {1, 1, 2, 0.5f};
        float[] b = {0, 1, 0, -1};
        float[] y = new float[4];
        try (CpuThreadPool pool = new CpuThreadPool(1)) {
            new LayerNorm(w, b, 1e-5).apply(pool, x, 1, y);
        }
        double inv = 1 / Math.sqrt(1.25 + 1e-5);
        float[] expected = {(float) (-1.5 * inv), (float) (-0.5 * inv + 1), (float) (0.5 * inv * 2),
            (float) (1.5 * inv * 0.5 - 1)};
        assertArrayEquals(expected, y, 1e-6f);
        // eps matters: with 1e-6 the result differs in the 6th digit
        float[] y6 = new float[4];
        try (CpuThreadPool pool = new CpuThreadPool(1)) {
            new LayerNorm(w, b, 1e-6).apply(pool, x, 1, y6);
        }
        assertEquals((float) (-1.5 / Math.sqrt(1.25 + 1e-6)), y6[0], 1e-7f);
    }

    @Test
    void layerNormRowsAreIndependentAndInPlaceWorks() {
        float[] x = {1, 2, 3, 10, 10, 10, -1, 0, 1};
        float[] w = {1, 1, 1};
        float[] b = {0, 0, 0};
        try (CpuThreadPool pool = new CpuThreadPool(2)) {
            new LayerNorm(w, b, 1e-6).apply(pool, x, 3, x);
        }
        float r = (float) (1 / Math.sqrt(2.0 / 3 + 1e-6));
        assertArrayEquals(new float[] {-r, 0, r, 0, 0, 0, -r, 0, r}, x, 1e-6f);
    }

    @Test
    void layerNorm2dOnChannelsLastMatchesTheChannelsFirstDefinition() {
        java.util.Random rnd = new java.util.Random(4);
        int c = 5;
        int hw = 7;
        float[] first = TinySam.random(rnd, c * hw, 2);
        float[] w = TinySam.random(rnd, c, 1);
        float[] b = TinySam.random(rnd, c, 1);
        float[] expected = NaiveOps.layerNorm2d(first, c, hw, w, b, 1e-6);
        float[] last = NaiveOps.channelsLast(first, c, hw);
        try (CpuThreadPool pool = new CpuThreadPool(1)) {
            new LayerNorm(w, b, 1e-6).apply(pool, last, hw, last);
        }
        assertArrayEquals(expected, NaiveOps.channelsFirst(last, c, hw), 2e-6f);
    }

    @Test
    void softmaxByHand() {
        float[] x = {0, 1, 2, 3, 1000};
        CpuOps.softmax(x, 1, 3);
        double z = Math.exp(-2) + Math.exp(-1) + 1;
        assertArrayEquals(new float[] {0, (float) (Math.exp(-2) / z), (float) (Math.exp(-1) / z), (float) (1 / z),
            1000}, x, 1e-7f);
        float[] big = {1000, 1000};
        CpuOps.softmax(big, 0, 2);
        assertArrayEquals(new float[] {0.5f, 0.5f}, big);
    }

    @Test
    void geluAndReluInPlace() {
        float[] x = {-1, 0, 1, 3};
        try (CpuThreadPool pool = new CpuThreadPool(2)) {
            CpuOps.gelu(pool, x, 4);
        }
        assertArrayEquals(new float[] {-0.15865525f, 0f, 0.8413447f, 2.9959503f}, x, 1e-7f);
        float[] r = {-2, 0f, 0.5f};
        CpuOps.relu(r, 3);
        assertArrayEquals(new float[] {0, 0f, 0.5f}, r);
    }

    @Test
    void poolRunsEveryTaskOnceAndPropagatesFailures() {
        try (CpuThreadPool pool = new CpuThreadPool(4)) {
            AtomicInteger[] hits = new AtomicInteger[1000];
            for (int i = 0; i < hits.length; i++) {
                hits[i] = new AtomicInteger();
            }
            pool.forEach(hits.length, i -> hits[i].incrementAndGet());
            for (AtomicInteger h : hits) {
                assertEquals(1, h.get());
            }
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> pool.forEach(50, i -> {
                if (i == 17) {
                    throw new IllegalStateException("task 17");
                }
            }));
            assertEquals("task 17", e.getMessage());
            int[] sum = new int[1];
            pool.forRange(10, 3, (a, b) -> {
                synchronized (sum) {
                    sum[0] += b - a;
                }
            });
            assertEquals(10, sum[0]);
        }
        assertThrows(IllegalArgumentException.class, () -> new CpuThreadPool(0));
    }
}
