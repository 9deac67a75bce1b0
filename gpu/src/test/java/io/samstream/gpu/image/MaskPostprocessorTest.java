package io.samstream.gpu.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.samstream.gpu.tensor.Tensor;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MaskPostprocessorTest {

    @Test
    void axisOfADoublingMatchesPyTorchByHand() {
        // src = 0.5 * (d + 0.5) - 0.5 = -0.25, 0.25, 0.75, 1.25; negative clamps to 0, the last index repeats.
        LinearAxis a = LinearAxis.of(2, 4);
        assertArrayEquals(new int[] {0, 0, 0, 1}, a.i0);
        assertArrayEquals(new int[] {1, 1, 1, 1}, a.i1);
        assertArrayEquals(new float[] {0f, 0.25f, 0.75f, 0.25f}, a.l1);
        assertArrayEquals(new float[] {1f, 0.75f, 0.25f, 0.75f}, a.l0);
    }

    @Test
    void axisOfAShrinkSamplesBetweenSourcePixels() {
        // 4 -> 2: src = 2 * (d + 0.5) - 0.5 = 0.5, 2.5 (no antialiasing: only two taps).
        LinearAxis a = LinearAxis.of(4, 2);
        assertArrayEquals(new int[] {0, 2}, a.i0);
        assertArrayEquals(new int[] {1, 3}, a.i1);
        assertArrayEquals(new float[] {0.5f, 0.5f}, a.l1);
    }

    @Test
    void bilinear2x2To4x4ByHand() {
        // torch.nn.functional.interpolate([[0, 1], [2, 3]], (4, 4), mode="bilinear", align_corners=False)
        float[] expected = {
            0.0f, 0.25f, 0.75f, 1.0f,
            0.5f, 0.75f, 1.25f, 1.5f,
            1.5f, 1.75f, 2.25f, 2.5f,
            2.0f, 2.25f, 2.75f, 3.0f};
        assertArrayEquals(expected, bilinear(new float[] {0, 1, 2, 3}, 2, 2, 4, 4));
        // Through the postprocessor: S = 4, nothing cropped, original = input size: just the first step.
        Tensor low = new Tensor(new float[] {0, 1, 2, 3}, 1, 2, 2);
        Tensor up = new MaskPostprocessor(4).upscaleLogits(low, new ImageSize(4, 4), new ImageSize(4, 4));
        assertArrayEquals(expected, up.data());
    }

    @Test
    void cropThenResizeByHand() {
        // S = 4 from the 2x2 above, crop to the top-left 2x3 (h' x w'), resize to 1x3 (H x W):
        // rows 0..1 of the intermediate are [0, .25, .75] and [.5, .75, 1.25]; a single output row samples
        // src = 2 * 0.5 - 0.5 = 0.5: the mean of both rows; columns map one to one.
        Tensor low = new Tensor(new float[] {0, 1, 2, 3}, 1, 2, 2);
        Tensor up = new MaskPostprocessor(4).upscaleLogits(low, new ImageSize(2, 3), new ImageSize(1, 3));
        assertArrayEquals(new int[] {1, 1, 3}, up.shape());
        assertArrayEquals(new float[] {0.25f, 0.5f, 1.0f}, up.data());
    }

    @Test
    void fusedEqualsTheTwoStepReferenceBitForBit() {
        int[][] cases = {
            // L, S, h', w', H, W
            {8, 32, 32, 20, 50, 80},   // upscale to a larger original (the usual case)
            {8, 32, 20, 32, 7, 11},    // downscale to a smaller original
            {8, 32, 32, 32, 32, 32},   // square, no crop, original = input
            {16, 64, 36, 64, 1080 / 20, 1920 / 20},
            {4, 16, 16, 9, 16, 9},     // resized = original: second step copies
            {8, 32, 1, 32, 3, 97},     // one-row crop
            {6, 20, 13, 20, 29, 41},   // non power-of-two scales
        };
        Random random = new Random(42);
        for (int[] c : cases) {
            int l = c[0], s = c[1], hp = c[2], wp = c[3], h = c[4], w = c[5];
            int n = 3;
            float[] low = new float[n * l * l];
            for (int i = 0; i < low.length; i++) {
                low[i] = (float) random.nextGaussian() * 4f;
            }
            Tensor up = new MaskPostprocessor(s).upscaleLogits(new Tensor(low, n, l, l), new ImageSize(hp, wp),
                    new ImageSize(h, w));
            boolean[][] masks = new MaskPostprocessor(s).masks(new Tensor(low, n, l, l), new ImageSize(hp, wp),
                    new ImageSize(h, w));
            assertArrayEquals(new int[] {n, h, w}, up.shape());
            for (int m = 0; m < n; m++) {
                float[] plane = new float[l * l];
                System.arraycopy(low, m * l * l, plane, 0, plane.length);
                float[] padded = bilinear(plane, l, l, s, s);
                float[] cropped = new float[hp * wp];
                for (int y = 0; y < hp; y++) {
                    System.arraycopy(padded, y * s, cropped, y * wp, wp);
                }
                float[] expected = bilinear(cropped, hp, wp, h, w);
                for (int i = 0; i < expected.length; i++) {
                    float actual = up.data()[m * h * w + i];
                    assertEquals(Float.floatToIntBits(expected[i]), Float.floatToIntBits(actual),
                            "case " + java.util.Arrays.toString(c) + " mask " + m + " pixel " + i);
                    assertEquals(expected[i] > 0f, masks[m][i]);
                }
            }
        }
    }

    @Test
    void leadingDimensionsAreKept() {
        Tensor low = new Tensor(new float[2 * 3 * 4 * 4], 2, 3, 4, 4);
        low.data()[3 * 16 + 5] = 1f; // batch 1, mask 0
        MaskPostprocessor p = new MaskPostprocessor(8);
        Tensor up = p.upscaleLogits(low, new ImageSize(8, 6), new ImageSize(5, 7));
        assertArrayEquals(new int[] {2, 3, 5, 7}, up.shape());
        boolean[][] masks = p.masks(low, new ImageSize(8, 6), new ImageSize(5, 7));
        assertEquals(6, masks.length);
        for (int m = 0; m < 6; m++) {
            boolean any = false;
            for (boolean b : masks[m]) {
                any |= b;
            }
            assertEquals(m == 3, any, "mask " + m);
        }
    }

    @Test
    void thresholdIsStrictlyAboveZero() {
        boolean[] mask = MaskPostprocessor.threshold(new float[] {9f, -1f, 0f, -0f, Float.MIN_VALUE, Float.NaN}, 1, 5);
        assertArrayEquals(new boolean[] {false, false, false, true, false}, mask);
    }

    @Test
    void refusesAResizedSizeBeyondTheInput() {
        Tensor low = Tensor.zeros(1, 4, 4);
        assertThrows(IllegalArgumentException.class,
                () -> new MaskPostprocessor(8).masks(low, new ImageSize(9, 8), new ImageSize(9, 8)));
    }

    /**
     * A literal transcription of PyTorch's upsample_bilinear2d (align_corners=False, fp32) for one plane, as
     * its CUDA kernel is written, with the multiply-adds nvcc fuses written as fma: no tables, no fusion of
     * the two steps, the index arithmetic redone per pixel.
     */
    static float[] bilinear(float[] in, int inH, int inW, int outH, int outW) {
        if (inH == outH && inW == outW) {
            return in.clone();
        }
        float[] out = new float[outH * outW];
        float rh = (float) inH / outH;
        float rw = (float) inW / outW;
        for (int y = 0; y < outH; y++) {
            float hr = Math.max(Math.fma(rh, y + 0.5f, -0.5f), 0f);
            int h0 = (int) hr;
            int hp = h0 < inH - 1 ? 1 : 0;
            float hl1 = hr - h0;
            float hl0 = 1f - hl1;
            for (int x = 0; x < outW; x++) {
                float wr = Math.max(Math.fma(rw, x + 0.5f, -0.5f), 0f);
                int w0 = (int) wr;
                int wp = w0 < inW - 1 ? 1 : 0;
                float wl1 = wr - w0;
                float wl0 = 1f - wl1;
                out[y * outW + x] = Math.fma(hl0,
                        Math.fma(wl0, in[h0 * inW + w0], wl1 * in[h0 * inW + w0 + wp]),
                        hl1 * Math.fma(wl0, in[(h0 + hp) * inW + w0], wl1 * in[(h0 + hp) * inW + w0 + wp]));
            }
        }
        return out;
    }
}
