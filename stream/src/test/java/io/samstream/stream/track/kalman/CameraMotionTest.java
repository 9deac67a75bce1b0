package io.samstream.stream.track.kalman;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.samstream.gpu.model.HostEmbeddingMatcher;
import org.junit.jupiter.api.Test;

/** {@link CameraMotion}'s reading of the matcher's scores: whole-cell peaks, sub-cell refinement, a still camera. */
class CameraMotionTest {
    static final int W = 2 * CameraMotion.RANGE + 1;

    /** Scores of a smooth peak at (px, py) cells: 1 - ((dx - px)^2 + (dy - py)^2) / 20. */
    static double[] peak(double px, double py) {
        double[] s = new double[W * W];
        for (int i = 0; i < s.length; i++) {
            double dx = i % W - CameraMotion.RANGE - px;
            double dy = i / W - CameraMotion.RANGE - py;
            s[i] = 1 - (dx * dx + dy * dy) / 20;
        }
        return s;
    }

    static CameraMotion motion() {
        return new CameraMotion(new HostEmbeddingMatcher(CameraMotion.RANGE));
    }

    @Test
    void aWholeCellMoveIsFollowedToAFractionOfACell() {
        CameraMotion m = motion();
        double[] d = m.shift(peak(1.3, -2.2));
        assertEquals(1.3, d[0], 1e-9, "a parabola's vertex is exact on a parabola");
        assertEquals(-2.2, d[1], 1e-9);
    }

    @Test
    void aStillCameraIsLeftAlone() {
        CameraMotion m = motion();
        // Objects moving on their own pull the peak by a fraction of a cell: not camera motion.
        for (int t = 0; t < 5; t++) {
            assertArrayEquals(new double[2], m.shift(peak(0.3, -0.2)), "frame " + t);
        }
        // A flat image matches every shift alike: ties go to no motion.
        assertArrayEquals(new double[2], m.shift(new double[W * W]));
    }

    @Test
    void subCellShiftsCountWhileTheCameraMovedRecently() {
        CameraMotion m = motion();
        assertEquals(-1, m.shift(peak(-1, 0))[0], 1e-9, "moved a whole cell");
        for (int t = 1; t <= CameraMotion.STILL_AFTER; t++) {
            assertEquals(0.3, m.shift(peak(0.3, 0))[0], 1e-9, "still shaking " + t + " frame(s) later");
        }
        assertArrayEquals(new double[2], m.shift(peak(0.3, 0)), "still again after " + CameraMotion.STILL_AFTER);
    }

    @Test
    void theMatcherMustSpanTheShiftsItReads() {
        assertThrows(IllegalArgumentException.class, () -> new CameraMotion(new HostEmbeddingMatcher(2)));
    }
}
