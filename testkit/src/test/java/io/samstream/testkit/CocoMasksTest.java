package io.samstream.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Strings worked out by hand from pycocotools' format (rleToString), so the decoder stands on its own. */
class CocoMasksTest {
    /** {@code rows} of '0'/'1', row-major. */
    private static boolean[] mask(String... rows) {
        boolean[] m = new boolean[rows.length * rows[0].length()];
        for (int y = 0; y < rows.length; y++) {
            for (int x = 0; x < rows[y].length(); x++) {
                m[y * rows[y].length() + x] = rows[y].charAt(x) == '1';
            }
        }
        return m;
    }

    @Test
    void singleCharacterCountsAreColumnMajorRunsStartingWithZeros() {
        assertArrayEquals(mask("000", "000"), CocoMasks.decode("6", 2, 3));
        assertArrayEquals(mask("111", "111"), CocoMasks.decode("06", 2, 3));
        // The 6th pixel in column-major order is the bottom-right one.
        assertArrayEquals(mask("000", "001"), CocoMasks.decode("51", 2, 3));
        // Runs 0,2,1,2,1: the 4th and 5th counts are stored as differences to the counts two before (0 = +2, 0 = +1).
        assertArrayEquals(new long[] {0, 2, 1, 2, 1}, CocoMasks.runs("02100"));
        assertArrayEquals(mask("101", "110"), CocoMasks.decode("02100", 2, 3));
    }

    @Test
    void longCountsTakeSeveralCharactersAndDifferencesMayBeNegative() {
        // 100 = 4 + 3 * 32: 'T' (4 | 0x20, more follows) then '3'.
        assertArrayEquals(new long[] {100}, CocoMasks.runs("T3"));
        // 16 needs the sign bit's place: '`' (16 | 0x20) then '0'.
        assertArrayEquals(new long[] {16}, CocoMasks.runs("`0"));
        // 2 - 5 = -3: 'M' is 29 = -3 in 5 bits with the sign bit 0x10 set.
        assertArrayEquals(new long[] {0, 5, 10, 2}, CocoMasks.runs("05:M"));
        // 2 - 100 = -98 = 30 + (-4) * 32: 'n' (30 | 0x20), then 'L' (28 = -4 in 5 bits).
        assertArrayEquals(new long[] {0, 100, 1, 2}, CocoMasks.runs("0T31nL"));
        boolean[] m = CocoMasks.decode("0T31nL", 1, 103);
        assertEquals(102, CocoMasks.area(m));
        assertTrue(!m[100] && m[99] && m[101] && m[102]);
    }

    @Test
    void badStringsAreRefusedNamingWhatIsWrong() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> CocoMasks.decode("5 1", 2, 3))
                .getMessage().contains("' ' at 1"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> CocoMasks.decode("52", 2, 3))
                .getMessage().contains("more than 6"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> CocoMasks.decode("41", 2, 3))
                .getMessage().contains("cover 5 pixels"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> CocoMasks.decode("0T", 1, 4))
                .getMessage().contains("inside a number"));
        // 'O' is 31: -1 in 5 bits with the sign bit set, and no run is negative.
        assertTrue(assertThrows(IllegalArgumentException.class, () -> CocoMasks.runs("O"))
                .getMessage().contains("negative"));
    }

    @Test
    void boxesHaveExclusiveRightAndBottomEdgesAndIouComparesMasks() {
        boolean[] m = mask("0000", "0110", "0100");
        assertArrayEquals(new int[] {1, 1, 3, 3}, CocoMasks.box(m, 3, 4));
        assertArrayEquals(new int[4], CocoMasks.box(new boolean[12], 3, 4));
        assertEquals(3, CocoMasks.area(m));
        assertEquals(2.0 / 3, CocoMasks.iou(m, mask("0000", "0110", "0000")), 1e-12);
        assertEquals(1.0, CocoMasks.iou(new boolean[4], new boolean[4]));
        assertThrows(IllegalArgumentException.class, () -> CocoMasks.box(m, 4, 4));
    }
}
