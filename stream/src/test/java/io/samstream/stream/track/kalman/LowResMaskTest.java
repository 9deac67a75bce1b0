package io.samstream.stream.track.kalman;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.tensor.Tensor;
import org.junit.jupiter.api.Test;

class LowResMaskTest {
    /** A 4x4 logits grid, row-major. */
    private static Tensor grid(float... v) {
        return new Tensor(v, 1, 4, 4);
    }

    @Test
    void shiftMovesTheLogitsAndFillsFromTheNearestEdge() {
        Tensor t = grid(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
        Tensor right = LowResMask.shift(t, 1, 0);
        assertArrayEquals(new float[] {1, 1, 2, 3, 5, 5, 6, 7, 9, 9, 10, 11, 13, 13, 14, 15}, right.data());
        Tensor up = LowResMask.shift(t, 0, -1);
        assertArrayEquals(new float[] {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 13, 14, 15, 16}, up.data());
    }

    @Test
    void iouCoverageAndCentroid() {
        boolean[] a = LowResMask.binary(grid(1, 1, -1, -1, 1, 1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
        boolean[] b = LowResMask.binary(grid(-1, 1, 1, -1, -1, 1, 1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
        assertEquals(4, LowResMask.area(a));
        assertEquals(2.0 / 6, LowResMask.iou(a, b), 1e-12);
        assertEquals(0.5, LowResMask.coveredBy(a, b), 1e-12);
        assertArrayEquals(new double[] {0.5, 0.5}, LowResMask.centroid(a, 4), 1e-12);
        assertNull(LowResMask.centroid(new boolean[16], 4));
    }

    @Test
    void theCentroidOfARingLiesOutsideIt() {
        float[] v = new float[25];
        java.util.Arrays.fill(v, 1);
        v[12] = -1; // the hole in the middle of a 5x5 ring
        boolean[] ring = LowResMask.binary(new Tensor(v, 1, 5, 5));
        double[] c = LowResMask.centroid(ring, 5);
        assertArrayEquals(new double[] {2, 2}, c, 1e-12);
        assertFalse(LowResMask.contains(ring, 5, c[0], c[1]));
        assertTrue(LowResMask.contains(ring, 5, 0, 0));
    }

    @Test
    void selectTakesOneOfSeveralMasks() {
        float[] v = new float[3 * 4];
        for (int i = 0; i < v.length; i++) {
            v[i] = i;
        }
        Tensor second = LowResMask.select(new Tensor(v, 3, 2, 2), 1);
        assertArrayEquals(new int[] {1, 2, 2}, second.shape());
        assertArrayEquals(new float[] {4, 5, 6, 7}, second.data());
    }

    @Test
    void cellWeightsAreTheMaskShareOfEachCell() {
        boolean[] m = new boolean[4 * 4]; // 4 x 4 mask over a 2 x 2 grid
        m[0] = true; // cell (0, 0): 1 of 4
        m[2] = m[3] = m[6] = m[7] = true; // cell (0, 1): all 4
        assertArrayEquals(new float[] {0.25f, 1, 0, 0}, LowResMask.cellWeights(m, 4, 2));
        assertThrows(IllegalArgumentException.class, () -> LowResMask.cellWeights(m, 4, 3));
    }
}
