package io.samstream.bench.track;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class BoundaryFTest {
    @Test
    void toleranceIsDavisShareOfTheDiagonal() {
        assertEquals(4, new BoundaryF(320, 240).tolerance(), "ceil(0.008 * 400) = ceil(3.2)");
        assertEquals(12, new BoundaryF(1000, 1000).tolerance(), "ceil(0.008 * 1414.2) = ceil(11.3)");
    }

    @Test
    void boundaryIsForegroundNextToBackgroundButNotTheImageEdge() {
        BoundaryF f = new BoundaryF(5, 4, 0);
        boolean[] m = Masks.of(
                "###..",
                "###..",
                "###..",
                ".....");
        boolean[] expected = Masks.of(
                "..#..",
                "..#..",
                "###..",
                ".....");
        assertArrayEquals(expected, f.boundary(m));
    }

    @Test
    void exactMatchIsOneAndAShiftCostsWhatFallsOutsideTheTolerance() {
        int w = 12;
        int h = 12;
        boolean[] g = Masks.rect(w, h, 2, 2, 6, 6); // boundary: the 12 border pixels of a 4x4 square
        boolean[] p = Masks.rect(w, h, 4, 2, 8, 6); // the same square 2 px to the right
        assertEquals(1.0, new BoundaryF(w, h, 0).of(g, g));
        // Tolerance 0: a boundary pixel matches only one at the same place. Shared: x = 4..5 on rows 2 and 5
        // (top and bottom edges), 4 pixels; P = R = 4/12.
        assertEquals(4.0 / 12, new BoundaryF(w, h, 0).of(p, g), 1e-12);
        // Tolerance 1 (a plus shape): predicted column x = 7 (4 px) has no true boundary pixel within 1 px
        // (the nearest, x = 5, is 2 away), the rest match: P = 8/12. Likewise the true column x = 2: R = 8/12.
        assertEquals(8.0 / 12, new BoundaryF(w, h, 1).of(p, g), 1e-12);
        // Tolerance 2: everything is within 2 px.
        assertEquals(1.0, new BoundaryF(w, h, 2).of(p, g), 1e-12);
    }

    @Test
    void precisionAndRecallDiffer() {
        int w = 10;
        int h = 10;
        boolean[] g = Masks.rect(w, h, 1, 1, 9, 9); // 8x8: 28 boundary pixels
        boolean[] p = Masks.rect(w, h, 1, 1, 5, 5); // 4x4 in its top-left corner: 12 boundary pixels
        // Tolerance 0. Predicted boundary on the true one: its top row (4) and left column (4), corner shared:
        // 7 of 12. True boundary on the predicted one: the same 7 of 28.
        double precision = 7.0 / 12;
        double recall = 7.0 / 28;
        assertEquals(2 * precision * recall / (precision + recall), new BoundaryF(w, h, 0).of(p, g), 1e-12);
    }

    @Test
    void emptyCasesFollowDavis() {
        BoundaryF f = new BoundaryF(6, 6, 1);
        boolean[] empty = new boolean[36];
        boolean[] some = Masks.rect(6, 6, 1, 1, 3, 3);
        assertEquals(1.0, f.of(empty, empty));
        assertEquals(0.0, f.of(some, empty));
        assertEquals(0.0, f.of(empty, some));
    }
}
