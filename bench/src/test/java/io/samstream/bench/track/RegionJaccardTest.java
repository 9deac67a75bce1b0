package io.samstream.bench.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class RegionJaccardTest {
    @Test
    void intersectionOverUnion() {
        boolean[] p = Masks.of(
                "##..",
                "##..",
                "....");
        boolean[] g = Masks.of(
                ".##.",
                ".##.",
                ".#..");
        // intersection 2 (column 1, rows 0-1), union 4 + 5 - 2 = 7
        assertEquals(2.0 / 7, RegionJaccard.of(p, g), 1e-12);
        assertEquals(1.0, RegionJaccard.of(g, g));
    }

    @Test
    void emptyCasesFollowDavis() {
        boolean[] empty = new boolean[12];
        boolean[] some = Masks.rect(4, 3, 0, 0, 1, 1);
        assertEquals(1.0, RegionJaccard.of(empty, empty), "absent and not predicted");
        assertEquals(0.0, RegionJaccard.of(some, empty), "predicted where nothing is");
        assertEquals(0.0, RegionJaccard.of(empty, some), "missed");
    }

    @Test
    void masksOfDifferentSizesAreAnError() {
        assertThrows(IllegalArgumentException.class, () -> RegionJaccard.of(new boolean[4], new boolean[5]));
    }
}
