package io.samstream.gpu.mask;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.testkit.CocoMasks;
import java.util.Random;
import org.junit.jupiter.api.Test;

class CocoRleTest {

    /** Row-major mask from rows of 0/1 digits. */
    private static boolean[] mask(String... rows) {
        int w = rows[0].length();
        boolean[] m = new boolean[rows.length * w];
        for (int y = 0; y < rows.length; y++) {
            for (int x = 0; x < w; x++) {
                m[y * w + x] = rows[y].charAt(x) == '1';
            }
        }
        return m;
    }

    @Test
    void emptyMaskIsOneRunOfZeros() {
        CocoRle rle = CocoRle.ofMask(new boolean[6], 2, 3);
        assertArrayEquals(new int[] {6}, rle.counts());
        assertEquals("6", rle.countsString()); // 6 fits one group: '0' + 6
        assertEquals(0, rle.area());
        assertArrayEquals(new int[] {0, 0, 0, 0}, rle.boundingBox());
        assertArrayEquals(new int[] {0, 0, 0, 0}, rle.boundingBoxCorners());
    }

    @Test
    void fullMaskStartsWithAnEmptyRunOfZeros() {
        CocoRle rle = CocoRle.ofMask(mask("111", "111"), 2, 3);
        assertArrayEquals(new int[] {0, 6}, rle.counts());
        assertEquals("06", rle.countsString());
        assertEquals(6, rle.area());
        assertArrayEquals(new int[] {0, 0, 3, 2}, rle.boundingBox());
        assertArrayEquals(new int[] {0, 0, 3, 2}, rle.boundingBoxCorners());
    }

    @Test
    void singlePixelCountsInColumnMajorOrder() {
        // (x=2, y=1) of a 2x3 mask is column-major index 2 * 2 + 1 = 5.
        CocoRle rle = CocoRle.ofMask(mask("000", "001"), 2, 3);
        assertArrayEquals(new int[] {5, 1}, rle.counts());
        assertEquals("51", rle.countsString());
        assertArrayEquals(new int[] {2, 1, 1, 1}, rle.boundingBox());
        assertArrayEquals(new int[] {2, 1, 3, 2}, rle.boundingBoxCorners());
    }

    @Test
    void twoByThreeExampleUsesDeltasFromTheFourthCount() {
        // Columns top to bottom: (1,1) (0,1) (1,0) -> 1 1 0 1 1 0 -> counts [0, 2, 1, 2, 1].
        // Strings: 0, 2, 1, then 2 - counts[1] = 0 and 1 - counts[2] = 0: "02100".
        CocoRle rle = CocoRle.ofMask(mask("101", "110"), 2, 3);
        assertArrayEquals(new int[] {0, 2, 1, 2, 1}, rle.counts());
        assertEquals("02100", rle.countsString());
        assertEquals(4, rle.area());
        assertArrayEquals(new int[] {0, 0, 3, 2}, rle.boundingBox());
    }

    @Test
    void largeAndNegativeDeltasUseContinuationAndSignBits() {
        // 100 = 3 * 32 + 4: low group 4 with the continuation bit (4 | 32 = 36 -> 'T'), then 3 -> '3'.
        assertEquals("T3", CocoRle.ofCounts(new int[] {100}, 10, 10).countsString());
        // counts [0, 5, 10, 2]: the fourth is written as 2 - 5 = -3, one group 0b11101 = 29 -> 'M'
        // (bit 4 set: negative, and the remaining value is -1, so no continuation).
        CocoRle rle = CocoRle.ofCounts(new int[] {0, 5, 10, 2}, 1, 17);
        assertEquals("05:M", rle.countsString());
        assertArrayEquals(new int[] {0, 5, 10, 2}, CocoRle.fromCountsString("05:M", 1, 17).counts());
        // 16 needs two groups although it is below 32: alone its bit 4 would read as a sign.
        // First group 16 | 32 (continuation) = 48 -> '`' (96), then 0 -> '0'.
        assertEquals("`0", CocoRle.ofCounts(new int[] {16}, 4, 4).countsString());
        assertArrayEquals(new int[] {16}, CocoRle.fromCountsString("`0", 4, 4).counts());
    }

    @Test
    void decodeInvertsTheKnownStrings() {
        assertArrayEquals(new boolean[6], CocoRle.decode("6", 2, 3));
        assertArrayEquals(mask("111", "111"), CocoRle.decode("06", 2, 3));
        assertArrayEquals(mask("000", "001"), CocoRle.decode("51", 2, 3));
        assertArrayEquals(mask("101", "110"), CocoRle.decode("02100", 2, 3));
    }

    @Test
    void boundingBoxOfARunCrossingColumnsSpansAllRows() {
        // 3x2 mask with (y=2, x=0) and (y=0, x=1): one run (indices 2, 3) wrapping from column 0 to column 1.
        CocoRle rle = CocoRle.ofMask(mask("01", "00", "10"), 3, 2);
        assertArrayEquals(new int[] {2, 2, 2}, rle.counts());
        assertArrayEquals(new int[] {0, 0, 2, 3}, rle.boundingBox());
        // Two separate runs in the middle rows of columns 1 and 3 of a 4x5 mask.
        CocoRle two = CocoRle.ofMask(mask("00000", "01010", "01010", "00000"), 4, 5);
        assertArrayEquals(new int[] {5, 2, 6, 2, 5}, two.counts());
        assertArrayEquals(new int[] {1, 1, 3, 2}, two.boundingBox());
        assertArrayEquals(new int[] {1, 1, 4, 3}, two.boundingBoxCorners());
    }

    @Test
    void randomMasksRoundTrip() {
        Random random = new Random(7);
        int[][] sizes = {{1, 1}, {1, 9}, {9, 1}, {2, 3}, {17, 23}, {64, 48}, {5, 200}};
        for (int[] size : sizes) {
            int h = size[0], w = size[1];
            for (int trial = 0; trial < 20; trial++) {
                boolean[] m = new boolean[h * w];
                double density = random.nextDouble();
                boolean blobby = random.nextBoolean();
                for (int i = 0; i < m.length; i++) {
                    m[i] = blobby && i > 0 ? (random.nextDouble() < 0.9 ? m[i - 1] : !m[i - 1])
                            : random.nextDouble() < density;
                }
                String s = CocoRle.encode(m, h, w);
                assertArrayEquals(m, CocoRle.decode(s, h, w), h + "x" + w + " " + s);
                CocoRle rle = CocoRle.fromCountsString(s, h, w);
                assertEquals(s, rle.countsString());
                assertEquals(CocoRle.ofMask(m, h, w), rle);
                long area = 0;
                int x0 = w, y0 = h, x1 = -1, y1 = -1;
                for (int y = 0; y < h; y++) {
                    for (int x = 0; x < w; x++) {
                        if (m[y * w + x]) {
                            area++;
                            x0 = Math.min(x0, x);
                            y0 = Math.min(y0, y);
                            x1 = Math.max(x1, x);
                            y1 = Math.max(y1, y);
                        }
                    }
                }
                assertEquals(area, rle.area());
                int[] expectedBox = area == 0 ? new int[4] : new int[] {x0, y0, x1 - x0 + 1, y1 - y0 + 1};
                int[] box = rle.boundingBox();
                // pycocotools' box is exact in x; in y a run crossing columns widens it to all rows.
                assertEquals(expectedBox[0], box[0]);
                assertEquals(expectedBox[2], box[2]);
                assertTrue(box[1] <= expectedBox[1] && box[1] + box[3] >= expectedBox[1] + expectedBox[3]);
                for (char c : s.toCharArray()) {
                    assertTrue(c >= 48 && c < 112, "character " + c);
                }
            }
        }
    }

    /** What the encoder writes, the testkit's decoder (written from pycocotools' format, not from CocoRle) reads back. */
    @Test
    void anIndependentDecoderReadsTheEncodersStrings() {
        Random random = new Random(11);
        int[][] sizes = {{1, 1}, {3, 1}, {1, 40}, {17, 23}, {64, 48}, {480, 640}};
        for (int[] size : sizes) {
            int h = size[0], w = size[1];
            for (int trial = 0; trial < 10; trial++) {
                boolean[] m = new boolean[h * w];
                // Long runs as well as short ones: counts of several characters and negative differences.
                int run = 1 + random.nextInt(Math.max(1, m.length / 3));
                for (int i = 0; i < m.length; i++) {
                    m[i] = i % run == 0 ? random.nextBoolean() : m[i - 1];
                }
                String s = CocoRle.encode(m, h, w);
                assertArrayEquals(m, CocoMasks.decode(s, h, w), h + "x" + w + " " + s);
                CocoRle rle = CocoRle.ofMask(m, h, w);
                assertEquals(rle.area(), CocoMasks.area(m));
                // A run of 1s that crosses into the next column covers the bottom and the top row: the RLE's box is exact.
                assertArrayEquals(CocoMasks.box(m, h, w), rle.boundingBoxCorners(), h + "x" + w + " " + s);
            }
        }
    }

    @Test
    void malformedStringsAreRefused() {
        // A last group with the continuation bit ('P' = 48 + 32), and a character past 'o' (48 + 63).
        assertThrows(IllegalArgumentException.class, () -> CocoRle.decode("5P", 2, 3));
        assertThrows(IllegalArgumentException.class, () -> CocoRle.decode("5p", 2, 3));
        assertThrows(IllegalArgumentException.class, () -> CocoRle.decode("5 1", 2, 3));
        assertThrows(IllegalArgumentException.class, () -> CocoRle.decode("52", 2, 3)); // 7 pixels for 6
        assertThrows(IllegalArgumentException.class, () -> CocoRle.decode("41", 2, 3)); // 5 pixels for 6
        assertThrows(IllegalArgumentException.class, () -> CocoRle.ofMask(new boolean[5], 2, 3));
    }
}
