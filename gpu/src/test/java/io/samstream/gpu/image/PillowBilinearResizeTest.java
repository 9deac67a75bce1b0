package io.samstream.gpu.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;
import org.junit.jupiter.api.Test;

class PillowBilinearResizeTest {

    /** A gray image (R = G = B) from row-major values. */
    private static RgbImage gray(int width, int height, int... values) {
        byte[] rgb = new byte[width * height * 3];
        for (int i = 0; i < values.length; i++) {
            rgb[i * 3] = rgb[i * 3 + 1] = rgb[i * 3 + 2] = (byte) values[i];
        }
        return new RgbImage(width, height, rgb);
    }

    private static int[] channel(RgbImage image, int c) {
        int[] out = new int[image.width() * image.height()];
        for (int y = 0; y < image.height(); y++) {
            for (int x = 0; x < image.width(); x++) {
                out[y * image.width() + x] = image.get(x, y, c);
            }
        }
        return out;
    }

    @Test
    void halvingWeightsAreThePillowTriangleWidenedByTwo() {
        // 4 -> 2: scale 2, support 2. Output 0 is centred at 1.0 and reads sources 0..2 at distances
        // 0.5, 0.5, 1.5, i.e. triangle(0.25), triangle(0.25), triangle(0.75) = 3/4, 3/4, 1/4 -> 3/7, 3/7, 1/7.
        PillowBilinearResize.Weights w = PillowBilinearResize.Weights.compute(4, 2);
        assertEquals(0, w.start(0));
        assertEquals(3, w.count(0));
        assertEquals(1, w.start(1));
        assertEquals(3, w.count(1));
        // 3/7 * 2^22 = 1797558.86 -> 1797559; 1/7 * 2^22 = 599186.29 -> 599186.
        assertEquals(1797559, w.weight(0, 0));
        assertEquals(1797559, w.weight(0, 1));
        assertEquals(599186, w.weight(0, 2));
        assertEquals(599186, w.weight(1, 0));
        assertEquals(1797559, w.weight(1, 1));
        assertEquals(1797559, w.weight(1, 2));
    }

    @Test
    void doublingWeightsInterpolateAndClampAtTheEdges() {
        // 2 -> 4: scale 0.5, support 1. Centres 0.25, 0.75, 1.25, 1.75.
        PillowBilinearResize.Weights w = PillowBilinearResize.Weights.compute(2, 4);
        assertEquals(1, w.count(0)); // only source 0 is in reach: weight 1
        assertEquals(1 << 22, w.weight(0, 0));
        assertEquals(2, w.count(1));
        assertEquals(3 << 20, w.weight(1, 0)); // 0.75
        assertEquals(1 << 20, w.weight(1, 1)); // 0.25
        assertEquals(1 << 20, w.weight(2, 0));
        assertEquals(3 << 20, w.weight(2, 1));
        assertEquals(1, w.start(3));
        assertEquals(1, w.count(3));
        assertEquals(1 << 22, w.weight(3, 0));
    }

    @Test
    void downscale4x4To2x2ByHand() {
        // v(x, y) = 10 + 10x + 40y.
        int[] v = new int[16];
        for (int y = 0; y < 4; y++) {
            for (int x = 0; x < 4; x++) {
                v[y * 4 + x] = 10 + 10 * x + 40 * y;
            }
        }
        // Horizontal pass, weights (3, 3, 1)/7 and (1, 3, 3)/7, rounded to bytes:
        //   row y -> (120/7 + 40y, 230/7 + 40y) = (17, 33), (57, 73), (97, 113), (137, 153).
        // Vertical pass on those bytes:
        //   col 0: (3*(17+57) + 97)/7 = 45.57 -> 46,  (57 + 3*(97+137))/7 = 108.43 -> 108
        //   col 1: (3*(33+73) + 113)/7 = 61.57 -> 62, (73 + 3*(113+153))/7 = 124.43 -> 124
        RgbImage out = PillowBilinearResize.resize(gray(4, 4, v), 2, 2);
        assertArrayEquals(new int[] {46, 62, 108, 124}, channel(out, 0));
        assertArrayEquals(channel(out, 0), channel(out, 2));
    }

    @Test
    void upscale2x2To4x4ByHand() {
        // Each axis: [a, b] -> [a, .75a + .25b, .25a + .75b, b], horizontal first, rounded to bytes between.
        // Rows: [0, 255] -> [0, 63.75 -> 64, 191.25 -> 191, 255]; [100, 200] -> [100, 125, 175, 200].
        // Columns then: [0,100] -> 0 25 75 100; [64,125] -> 64 79.25->79 109.75->110 125;
        //               [191,175] -> 191 187 179 175; [255,200] -> 255 241.25->241 213.75->214 200.
        RgbImage out = PillowBilinearResize.resize(gray(2, 2, 0, 255, 100, 200), 4, 4);
        assertArrayEquals(new int[] {
            0, 64, 191, 255,
            25, 79, 187, 241,
            75, 110, 179, 214,
            100, 125, 175, 200}, channel(out, 1));
    }

    @Test
    void sameSizeIsTheIdentity() {
        RgbImage in = randomImage(7, 5, 1);
        RgbImage out = PillowBilinearResize.resize(in, 7, 5);
        assertArrayEquals(in.rgb(), out.rgb());
    }

    @Test
    void onlyTheAxisThatChangesIsResampled() {
        // 4x2 -> 2x2: horizontal pass only; each row is (3,3,1)/7 and (1,3,3)/7 of itself.
        RgbImage out = PillowBilinearResize.resize(gray(4, 2, 10, 20, 30, 40, 0, 70, 140, 210), 2, 2);
        // Row 0: 120/7 = 17.14 -> 17, 230/7 = 32.86 -> 33. Row 1: (3*70 + 140)/7 = 50, (70 + 3*350)/7 = 160.
        assertArrayEquals(new int[] {17, 33, 50, 160}, channel(out, 0));
        // 2x4 -> 2x2: vertical pass only, the same weights down the columns.
        RgbImage vertical = PillowBilinearResize.resize(gray(2, 4, 10, 0, 20, 70, 30, 140, 40, 210), 2, 2);
        assertArrayEquals(new int[] {17, 50, 33, 160}, channel(vertical, 0));
    }

    @Test
    void channelsAreIndependent() {
        RgbImage in = randomImage(9, 6, 2);
        RgbImage out = PillowBilinearResize.resize(in, 4, 11);
        for (int c = 0; c < 3; c++) {
            RgbImage single = gray(9, 6, channel(in, c));
            assertArrayEquals(channel(PillowBilinearResize.resize(single, 4, 11), 0), channel(out, c));
        }
    }

    @Test
    void constantImagesStayConstant() {
        // Weights of each output pixel add up to 2^22 within rounding, which the half-unit offset absorbs.
        int[] sizes = {1, 2, 3, 5, 7, 16, 33, 100};
        for (int value : new int[] {0, 1, 128, 254, 255}) {
            for (int inW : sizes) {
                for (int outW : sizes) {
                    RgbImage in = gray(inW, 3, constant(inW * 3, value));
                    RgbImage out = PillowBilinearResize.resize(in, outW, 2);
                    assertArrayEquals(constant(outW * 2, value), channel(out, 0), inW + " -> " + outW + " of " + value);
                }
            }
        }
    }

    @Test
    void matchesAStraightforwardTwoPassWithoutTheRowCrop() {
        // The horizontal pass only computes the rows the vertical pass reads; that must not change anything.
        for (int[] size : new int[][] {{13, 9, 5, 4}, {9, 13, 20, 3}, {30, 17, 7, 29}, {5, 40, 5, 8}, {1, 1, 3, 2}}) {
            RgbImage in = randomImage(size[0], size[1], size[0] * 31 + size[1]);
            RgbImage expected = naiveTwoPass(in, size[2], size[3]);
            assertArrayEquals(expected.rgb(), PillowBilinearResize.resize(in, size[2], size[3]).rgb());
        }
    }

    @Test
    void clip8SaturatesAndDropsTheFraction() {
        assertEquals(0, PillowBilinearResize.clip8(-5 << 22) & 0xFF);
        assertEquals(0, PillowBilinearResize.clip8((1 << 22) - 1) & 0xFF);
        assertEquals(1, PillowBilinearResize.clip8(1 << 22) & 0xFF);
        assertEquals(255, PillowBilinearResize.clip8(300 << 22) & 0xFF);
    }

    @Test
    void fixedPointRoundsHalfAwayFromZero() {
        assertEquals(3, PillowBilinearResize.Weights.toFixed(2.5 / (1 << 22)));
        assertEquals(-3, PillowBilinearResize.Weights.toFixed(-2.5 / (1 << 22)));
        assertEquals(2, PillowBilinearResize.Weights.toFixed(2.49 / (1 << 22)));
    }

    /** Both passes over the full image, accumulating exactly as Pillow, with no cropping of the intermediate. */
    private static RgbImage naiveTwoPass(RgbImage in, int outW, int outH) {
        PillowBilinearResize.Weights wx = PillowBilinearResize.Weights.compute(in.width(), outW);
        PillowBilinearResize.Weights wy = PillowBilinearResize.Weights.compute(in.height(), outH);
        int[][][] mid = new int[in.height()][outW][3];
        for (int y = 0; y < in.height(); y++) {
            for (int x = 0; x < outW; x++) {
                for (int c = 0; c < 3; c++) {
                    int acc = 1 << 21;
                    for (int i = 0; i < wx.count(x); i++) {
                        acc += in.get(wx.start(x) + i, y, c) * wx.weight(x, i);
                    }
                    mid[y][x][c] = outW == in.width() ? in.get(x, y, c) : PillowBilinearResize.clip8(acc) & 0xFF;
                }
            }
        }
        byte[] out = new byte[outW * outH * 3];
        for (int y = 0; y < outH; y++) {
            for (int x = 0; x < outW; x++) {
                for (int c = 0; c < 3; c++) {
                    int acc = 1 << 21;
                    for (int i = 0; i < wy.count(y); i++) {
                        acc += mid[wy.start(y) + i][x][c] * wy.weight(y, i);
                    }
                    out[(y * outW + x) * 3 + c] = outH == in.height() ? (byte) mid[y][x][c] : PillowBilinearResize.clip8(acc);
                }
            }
        }
        return new RgbImage(outW, outH, out);
    }

    private static int[] constant(int n, int value) {
        int[] v = new int[n];
        java.util.Arrays.fill(v, value);
        return v;
    }

    static RgbImage randomImage(int width, int height, long seed) {
        byte[] rgb = new byte[width * height * 3];
        new Random(seed).nextBytes(rgb);
        return new RgbImage(width, height, rgb);
    }
}
