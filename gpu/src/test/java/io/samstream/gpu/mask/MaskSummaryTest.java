package io.samstream.gpu.mask;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class MaskSummaryTest {

    /** A summary of a row-major mask, its bits packed column-major by hand. */
    private static MaskSummary summaryOf(boolean[] mask, int h, int w) {
        long[] bits = new long[(h * w + 63) / 64];
        long area = 0;
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                if (mask[y * w + x]) {
                    int p = x * h + y;
                    bits[p / 64] |= 1L << (p % 64);
                    area++;
                }
            }
        }
        return new MaskSummary(h, w, bits, area, new int[4], 0, area);
    }

    @ParameterizedTest(name = "{0}x{1} density {2}")
    @CsvSource({"1, 1, 0.5", "7, 9, 0.5", "64, 1, 0.3", "1, 65, 0.7", "33, 35, 0.02", "30, 40, 0.98", "128, 3, 0.5",
        "17, 19, 0.0", "17, 19, 1.0"})
    void runLengthsFromTheBitsAreCocoRleOfTheMask(int h, int w, double density) {
        Random rnd = new Random(h * 1000L + w);
        boolean[] mask = new boolean[h * w];
        // runs of a few pixels, so both long runs and single pixels occur
        boolean on = rnd.nextDouble() < density;
        for (int i = 0; i < mask.length; i++) {
            if (rnd.nextInt(4) == 0) {
                on = rnd.nextDouble() < density;
            }
            mask[i] = on;
        }
        MaskSummary s = summaryOf(mask, h, w);
        assertEquals(CocoRle.ofMask(mask, h, w), s.rle());
        assertArrayEquals(mask, s.toRowMajor());
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                assertEquals(mask[y * w + x], s.get(x, y), "pixel " + x + "," + y);
            }
        }
    }

    @Test
    void aMaskStartingWithASetPixelStartsWithAnEmptyRun() {
        boolean[] mask = {true, true, false, true};
        MaskSummary s = summaryOf(mask, 2, 2);
        // column-major: (0,0) set, (0,1) clear, (1,0) and (1,1) set
        assertArrayEquals(new int[] {0, 1, 1, 2}, s.rle().counts());
    }

    @Test
    void stabilityIsInnerOverOuterAndZeroWhenBothAreEmpty() {
        long[] bits = new long[1];
        assertEquals(0f, new MaskSummary(4, 4, bits, 0, new int[4], 0, 0).stability());
        assertEquals((float) (3.0 / 7), new MaskSummary(4, 4, bits, 0, new int[4], 3, 7).stability());
    }

    @Test
    void fullSizeLogitsGiveTheirBitsBoxAreaAndStability() {
        // 3 rows x 4 columns, row-major: set where > 0; above +1 stable, above -1 loose.
        float[] logits = {
            -5f, 0.5f, 2f, -0.5f,
            -5f, -5f, 3f, -5f,
            -2f, -5f, -5f, -5f,
        };
        MaskSummary s = MaskSummary.of(logits, 3, 4);
        assertEquals(3, s.area());
        assertArrayEquals(new int[] {1, 0, 3, 2}, s.box());
        assertEquals(2, s.stableCount());
        assertEquals(4, s.looseCount());
        assertEquals(0.5f, s.stability());
        for (int y = 0; y < 3; y++) {
            for (int x = 0; x < 4; x++) {
                assertEquals(logits[y * 4 + x] > 0, s.get(x, y), "pixel " + x + "," + y);
            }
        }
        assertArrayEquals(new int[4], MaskSummary.of(new float[6], 2, 3).box());
        assertThrows(IllegalArgumentException.class, () -> MaskSummary.of(new float[5], 2, 3));
    }

    @Test
    void inconsistentInputIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new MaskSummary(10, 10, new long[1], 0, new int[4], 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new MaskSummary(2, 2, new long[1], 5, new int[4], 0, 5));
        assertThrows(IllegalArgumentException.class, () -> new MaskSummary(2, 2, new long[1], 0, new int[3], 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new MaskSummary(2, 2, new long[1], 0, new int[4], 3, 2));
        assertThrows(IndexOutOfBoundsException.class, () -> new MaskSummary(2, 2, new long[1], 0, new int[4], 0, 0).get(2, 0));
    }

    /** Column by column, a mask set in its last column only: its box starts there; a column too many or too few fails. */
    @Test
    void columnsMakeTheSummaryOfTheirValuesAndRefuseAWrongCount() {
        MaskSummary.Columns c = new MaskSummary.Columns(3, 2);
        c.add(new float[] {-5f, -0.5f, -2f});
        assertThrows(IllegalStateException.class, c::summary, "one column of two");
        c.add(new float[] {0.5f, 3f, -1f});
        MaskSummary m = c.summary();
        assertEquals(2, m.area());
        assertArrayEquals(new int[] {1, 0, 2, 2}, m.box());
        assertEquals(1, m.stableCount());
        assertEquals(3, m.looseCount(), "-0.5, 0.5 and 3 are above -1");
        assertEquals(MaskSummary.of(new float[] {-5f, 0.5f, -0.5f, 3f, -2f, -1f}, 3, 2).rle().countsString(),
                m.rle().countsString());
        assertThrows(IllegalStateException.class, () -> c.add(new float[3]), "a third column");
    }

    @Test
    void minusTakesTheOtherMasksPixelsOutAndRecountsAreaAndBox() {
        int h = 9;
        int w = 70; // bits across word boundaries
        boolean[] a = new boolean[h * w];
        boolean[] b = new boolean[h * w];
        for (int y = 1; y < 8; y++) {
            for (int x = 2; x < 60; x++) {
                a[y * w + x] = true;
                b[y * w + x] = x >= 30; // the right half, and beyond a
            }
            b[y * w + 65] = true;
        }
        MaskSummary sa = MaskSummary.of(logits(a), h, w);
        MaskSummary diff = sa.minus(MaskSummary.of(logits(b), h, w));
        assertEquals(7 * 28, diff.area());
        assertArrayEquals(new int[] {2, 1, 30, 8}, diff.box());
        assertEquals(sa.stability(), diff.stability(), "stability describes the logits: kept");
        for (int i = 0; i < a.length; i++) {
            assertEquals(a[i] && !b[i], diff.toRowMajor()[i], "pixel " + i);
        }
        MaskSummary none = sa.minus(sa);
        assertEquals(0, none.area());
        assertArrayEquals(new int[4], none.box());
        assertThrows(IllegalArgumentException.class, () -> sa.minus(MaskSummary.of(new float[w * 8], 8, w)));
    }

    private static float[] logits(boolean[] m) {
        float[] l = new float[m.length];
        for (int i = 0; i < m.length; i++) {
            l[i] = m[i] ? 5 : -5;
        }
        return l;
    }
}
