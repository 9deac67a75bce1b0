package io.samstream.stream.track.kalman;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import org.junit.jupiter.api.Test;

class PartialBoxTest {
    static final double[] PREDICTED = {100, 50, 160, 110};
    static final double[] CLEAR = {60, 60};

    @Test
    void aSideCutByAnObjectInFrontGetsItsClearExtentBack() {
        // The right 40 % is hidden: the left edge (seen) stays, the right one is put back 60 px from it.
        double[] measured = {102, 52, 138, 108};
        assertArrayEquals(new double[] {102, 52, 162, 108}, PartialBox.full(PREDICTED, measured, CLEAR, s -> true),
                1e-9);
        // Cut at the top instead: the bottom edge stays.
        double[] top = {101, 80, 161, 110};
        assertArrayEquals(new double[] {101, 50, 161, 110}, PartialBox.full(PREDICTED, top, CLEAR, s -> true), 1e-9);
    }

    @Test
    void theStripTestedIsThePartOfThePredictionBeyondTheCutEdge() {
        double[] measured = {102, 52, 138, 108};
        double[][] seen = new double[1][];
        PartialBox.full(PREDICTED, measured, CLEAR, s -> {
            seen[0] = s.clone();
            return false;
        });
        assertArrayEquals(new double[] {138, 50, 160, 110}, seen[0], 1e-9);
    }

    @Test
    void nothingInFrontAMoveOrASmallChangeIsMeasuredAsItIs() {
        double[] shrunk = {102, 52, 138, 108};
        assertArrayEquals(shrunk, PartialBox.full(PREDICTED, shrunk, CLEAR, s -> false), 1e-9);
        double[] moved = {106, 44, 166, 104}; // a camera jump: same extent
        assertArrayEquals(moved, PartialBox.full(PREDICTED, moved, CLEAR, s -> true), 1e-9);
        double[] slightly = {100, 50, 155, 110}; // 8 % narrower: within the tolerance
        assertArrayEquals(slightly, PartialBox.full(PREDICTED, slightly, CLEAR, s -> true), 1e-9);
    }
}
