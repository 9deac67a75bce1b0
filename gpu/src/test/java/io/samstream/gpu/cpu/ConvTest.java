package io.samstream.gpu.cpu;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

class ConvTest {
    private static void check(float[] expected, float[] actual, double tol, String what) {
        double d = NaiveOps.maxAbsDiff(expected, actual);
        assertTrue(d < tol, what + " differs by " + d);
    }

    @Test
    void conv2dMatchesNaiveForNeckAndMaskDownscalingShapes() {
        Random rnd = new Random(5);
        // {c, h, w, o, k, stride, pad}: 3x3 pad 1 (neck), 2x2 stride 2 (mask downscaling), 1x1, odd sizes.
        int[][] cases = {{5, 7, 6, 4, 3, 1, 1}, {3, 8, 8, 6, 2, 2, 0}, {6, 5, 5, 3, 1, 1, 0}, {2, 9, 7, 3, 3, 2, 1}};
        try (CpuThreadPool pool = new CpuThreadPool(2)) {
            for (int[] c : cases) {
                int ch = c[0];
                int h = c[1];
                int w = c[2];
                int o = c[3];
                int k = c[4];
                float[] x = TinySam.random(rnd, ch * h * w, 1);
                float[] weight = TinySam.random(rnd, o * ch * k * k, 1);
                float[] bias = TinySam.random(rnd, o, 1);
                Conv2d conv = new Conv2d(new Linear(PackedMatrix.fromOutIn(weight, o, ch * k * k), bias), ch, k,
                        c[5], c[6]);
                int ho = conv.outSize(h);
                int wo = conv.outSize(w);
                float[] expected = NaiveOps.conv2d(x, ch, h, w, weight, bias, o, k, c[5], c[6]);
                float[] actual = conv.forward(pool, NaiveOps.channelsLast(x, ch, h * w), h, w);
                check(expected, NaiveOps.channelsFirst(actual, o, ho * wo), 1e-5, "conv " + java.util.Arrays.toString(c));
            }
        }
    }

    @Test
    void patchEmbeddingRowsAreTheStridedConvolution() {
        Random rnd = new Random(6);
        int s = 12;
        int p = 4;
        int d = 5;
        float[] image = TinySam.random(rnd, 2 * 3 * s * s, 1);
        float[] weight = TinySam.random(rnd, d * 3 * p * p, 1);
        float[] bias = TinySam.random(rnd, d, 1);
        int offset = 3 * s * s; // second image of a batch
        float[] second = java.util.Arrays.copyOfRange(image, offset, offset + 3 * s * s);
        float[] expected = NaiveOps.conv2d(second, 3, s, s, weight, bias, d, p, p, 0);
        float[] rows = ImageEncoderCpu.patches(image, offset, s, p, s / p);
        float[] actual = NaiveOps.linear(rows, (s / p) * (s / p), 3 * p * p, weight, bias, d);
        check(expected, NaiveOps.channelsFirst(actual, d, (s / p) * (s / p)), 1e-5, "patch embedding");
    }

    @Test
    void convTransposeMatchesNaive() {
        Random rnd = new Random(7);
        int c = 6;
        int h = 3;
        int w = 5;
        int o = 4;
        float[] x = TinySam.random(rnd, c * h * w, 1);
        float[] weight = TinySam.random(rnd, c * o * 4, 1);
        float[] bias = TinySam.random(rnd, o, 1);
        float[] expected = NaiveOps.convTranspose2x2(x, c, h, w, weight, bias, o);
        float[] actual;
        try (CpuThreadPool pool = new CpuThreadPool(3)) {
            actual = new ConvTranspose2x2(weight, bias, c, o).forward(pool, NaiveOps.channelsLast(x, c, h * w), h, w);
        }
        check(expected, NaiveOps.channelsFirst(actual, o, 4 * h * w), 1e-5, "conv transpose");
    }
}
