package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.sam2.Resampling;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The row-wise bilinear resize and the in-place object-wise rule against their whole-map forms, bit for bit. */
class MaskResizeRowsTest {
    @Test
    void rowsAreResamplingsBilinear() {
        Random r = new Random(4);
        int[][] shapes = {{9, 7, 20, 16}, {24, 24, 96, 96}, {24, 24, 18, 32}, {24, 24, 7, 5}, {1, 5, 3, 3},
            {13, 11, 13, 11}, {288, 288, 480, 640}};
        for (int[] s : shapes) {
            float[] x = new float[s[0] * s[1]];
            for (int i = 0; i < x.length; i++) {
                x[i] = r.nextFloat() * 60 - 30;
            }
            float[] expected = Resampling.bilinear(x, s[0], s[1], s[2], s[3]);
            assertArrayEquals(expected, MaskResize.bilinear(x, s[0], s[1], s[2], s[3]));
            MaskResize.Bilinear up = new MaskResize.Bilinear(s[0], s[1], s[2], s[3]);
            float[] byBand = new float[s[2] * s[3]];
            for (int from = 0; from < s[2]; from += 3) {
                int to = Math.min(s[2], from + 3);
                float[] band = new float[(to - from) * s[3]];
                up.rows(x, from, to, band, 0);
                System.arraycopy(band, 0, byBand, from * s[3], band.length);
            }
            assertArrayEquals(expected, byBand);
        }
    }

    @Test
    void objectWiseInPlaceOnThePoolIsTheCopyingRule() {
        Random r = new Random(8);
        int pixels = 3 * MaskOverlaps.PIXELS_PER_TASK + 17;
        boolean[][] masks = new boolean[4][pixels];
        for (boolean[] m : masks) {
            for (int i = 0; i < pixels; i++) {
                m[i] = r.nextFloat() < 0.4f;
            }
        }
        float[] scores = {0.5f, 0.9f, 0.9f, 0f};
        boolean[][] expected = MaskOverlaps.objectWise(masks, scores);
        try (CpuThreadPool pool = new CpuThreadPool(3)) {
            MaskOverlaps.objectWise(pool, masks, scores);
        }
        for (int k = 0; k < masks.length; k++) {
            assertArrayEquals(expected[k], masks[k]);
        }
    }
}
