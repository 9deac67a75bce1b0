package io.samstream.gpu.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

class GemmTest {
    @Test
    void matchesNaiveProductOnOddSizesAcrossBlocksAndPanels() {
        Random rnd = new Random(1);
        // K crosses the K block and the 8-wide unroll with a tail; N needs two panels; M a partial row block.
        int[][] sizes = {{1, 1, 1}, {3, 7, 5}, {37, 523, 300}, {17, 256, 256}, {5, 9, 513}};
        try (CpuThreadPool pool = new CpuThreadPool(3)) {
            for (int[] s : sizes) {
                int m = s[0];
                int k = s[1];
                int n = s[2];
                float[] a = TinySam.random(rnd, m * k, 1);
                float[] w = TinySam.random(rnd, n * k, 1);
                float[] bias = TinySam.random(rnd, n, 1);
                float[] expected = NaiveOps.linear(a, m, k, w, bias, n);
                float[] actual = new float[m * n];
                Gemm.multiply(pool, a, m, PackedMatrix.fromOutIn(w, n, k), bias, actual);
                double tol = 1e-5 * Math.sqrt(k);
                assertTrue(NaiveOps.maxAbsDiff(expected, actual) < tol,
                        "size " + m + "x" + k + "x" + n + " differs by " + NaiveOps.maxAbsDiff(expected, actual));

                float[] noBias = new float[m * n];
                Gemm.multiply(pool, a, m, PackedMatrix.fromOutIn(w, n, k), null, noBias);
                assertTrue(NaiveOps.maxAbsDiff(NaiveOps.linear(a, m, k, w, null, n), noBias) < tol);
            }
        }
    }

    @Test
    void inOutLayoutIsTheTransposeOfOutIn() {
        Random rnd = new Random(2);
        int k = 11;
        int n = 270;
        float[] outIn = TinySam.random(rnd, n * k, 1);
        float[] inOut = new float[k * n];
        for (int j = 0; j < n; j++) {
            for (int t = 0; t < k; t++) {
                inOut[t * n + j] = outIn[j * k + t];
            }
        }
        float[] a = TinySam.random(rnd, 4 * k, 1);
        float[] y1 = new float[4 * n];
        float[] y2 = new float[4 * n];
        try (CpuThreadPool pool = new CpuThreadPool(2)) {
            Gemm.multiply(pool, a, 4, PackedMatrix.fromOutIn(outIn, n, k), null, y1);
            Gemm.multiply(pool, a, 4, PackedMatrix.fromInOut(inOut, k, n), null, y2);
        }
        assertArrayEquals(y1, y2);
    }

    @Test
    void resultsAreBitIdenticalForAnyThreadCount() {
        Random rnd = new Random(3);
        int m = 70;
        int k = 300;
        int n = 280;
        float[] a = TinySam.random(rnd, m * k, 1);
        PackedMatrix w = PackedMatrix.fromOutIn(TinySam.random(rnd, n * k, 1), n, k);
        float[] one = new float[m * n];
        float[] four = new float[m * n];
        try (CpuThreadPool p1 = new CpuThreadPool(1); CpuThreadPool p4 = new CpuThreadPool(4)) {
            Gemm.multiply(p1, a, m, w, null, one);
            Gemm.multiply(p4, a, m, w, null, four);
        }
        assertArrayEquals(one, four);
    }

    @Test
    void rejectsOperandsThatDoNotFit() {
        try (CpuThreadPool pool = new CpuThreadPool(1)) {
            PackedMatrix w = PackedMatrix.fromOutIn(new float[6], 2, 3);
            assertThrows(IllegalArgumentException.class,
                    () -> Gemm.multiply(pool, new float[5], 2, w, null, new float[4]));
            assertThrows(IllegalArgumentException.class,
                    () -> Gemm.multiply(pool, new float[6], 2, w, new float[3], new float[4]));
        }
        assertThrows(IllegalArgumentException.class, () -> PackedMatrix.fromOutIn(new float[5], 2, 3));
    }
}
