package io.samstream.gpu.predict;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SmallRegionsTest {
    private static boolean[] parse(String... rows) {
        boolean[] m = new boolean[rows.length * rows[0].length()];
        for (int y = 0; y < rows.length; y++) {
            for (int x = 0; x < rows[y].length(); x++) {
                m[y * rows[0].length() + x] = rows[y].charAt(x) == '#';
            }
        }
        return m;
    }

    @Test
    void removesSmallIslandsKeepsBigOnes() {
        boolean[] mask = parse(
                "####....",
                "####...#",
                "####....",
                "........");
        SmallRegions.Result r = SmallRegions.apply(mask, 8, 4, 3, false);
        assertTrue(r.changed());
        assertArrayEquals(parse(
                "####....",
                "####....",
                "####....",
                "........"), r.mask());
    }

    @Test
    void diagonalNeighboursAreConnected() {
        // 8-connectivity: the diagonal chain is one island of 4 pixels, not four of 1.
        boolean[] mask = parse(
                "#...",
                ".#..",
                "..#.",
                "...#");
        SmallRegions.Result r = SmallRegions.apply(mask, 4, 4, 4, false);
        assertFalse(r.changed());
        assertSame(mask, r.mask());
    }

    @Test
    void whenEveryIslandIsSmallTheLargestStays() {
        boolean[] mask = parse(
                "##..#",
                "##...",
                ".....");
        SmallRegions.Result r = SmallRegions.apply(mask, 5, 3, 10, false);
        assertTrue(r.changed(), "the reference reports a change even then");
        assertArrayEquals(parse(
                "##...",
                "##...",
                "....."), r.mask());
    }

    @Test
    void fillsSmallHolesButNotTheLargeOutside() {
        boolean[] mask = parse(
                "......",
                ".####.",
                ".#.##.",
                ".####.",
                "......");
        SmallRegions.Result r = SmallRegions.apply(mask, 6, 5, 2, true);
        assertTrue(r.changed());
        assertArrayEquals(parse(
                "......",
                ".####.",
                ".####.",
                ".####.",
                "......"), r.mask());
    }

    @Test
    void cleanFillsHolesThenRemovesIslands() {
        boolean[] mask = parse(
                "#####...",
                "#.###..#",
                "#####...");
        SmallRegions.Result r = SmallRegions.clean(mask, 8, 3, 2);
        assertTrue(r.changed());
        assertArrayEquals(parse(
                "#####...",
                "#####...",
                "#####..."), r.mask());
        SmallRegions.Result none = SmallRegions.clean(parse("##..", "##.."), 4, 2, 2);
        assertFalse(none.changed());
    }
}
