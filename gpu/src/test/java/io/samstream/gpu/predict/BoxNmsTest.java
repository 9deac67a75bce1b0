package io.samstream.gpu.predict;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class BoxNmsTest {
    @Test
    void iouIsTorchvisionsBoxIou() {
        // 10x10 boxes overlapping by 5x10: 50 / (100 + 100 - 50).
        assertEquals(50.0 / 150, BoxNms.iou(new double[] {0, 0, 10, 10}, new double[] {5, 0, 15, 10}), 1e-12);
        assertEquals(1.0, BoxNms.iou(new double[] {1, 2, 3, 4}, new double[] {1, 2, 3, 4}), 0.0);
        assertEquals(0.0, BoxNms.iou(new double[] {0, 0, 10, 10}, new double[] {10, 0, 20, 10}), 0.0, "touching");
        assertEquals(0.0, BoxNms.iou(new double[] {0, 0, 0, 0}, new double[] {0, 0, 0, 0}), 0.0, "empty union");
    }

    @Test
    void overlappingBoxesKeepTheBestScore() {
        double[][] boxes = {{0, 0, 10, 10}, {1, 0, 11, 10}, {0, 0.5, 10, 10.5}};
        // IoU(0,1) = 0.818, IoU(0,2) = 0.905, IoU(1,2) = 0.747, all > 0.7: only the best survives,
        // wherever it is in the input.
        assertArrayEquals(new int[] {1}, BoxNms.keep(boxes, new float[] {0.8f, 0.9f, 0.85f}, 0.7));
        assertArrayEquals(new int[] {2}, BoxNms.keep(boxes, new float[] {0.8f, 0.5f, 0.85f}, 0.7));
    }

    @Test
    void nonOverlappingBoxesAllSurviveBestFirst() {
        double[][] boxes = {{0, 0, 10, 10}, {20, 0, 30, 10}, {0, 20, 10, 30}, {5, 0, 15, 10}};
        // Box 3 overlaps box 0 by IoU 1/3: below the threshold, both stay.
        assertArrayEquals(new int[] {2, 0, 3, 1}, BoxNms.keep(boxes, new float[] {0.7f, 0.2f, 0.9f, 0.5f}, 0.7));
    }

    @Test
    void thresholdIsStrict() {
        double[][] boxes = {{0, 0, 10, 10}, {5, 0, 15, 10}}; // IoU exactly 1/3
        assertArrayEquals(new int[] {0, 1}, BoxNms.keep(boxes, new float[] {1f, 0.5f}, 1.0 / 3));
        assertArrayEquals(new int[] {0}, BoxNms.keep(boxes, new float[] {1f, 0.5f}, 0.33));
    }

    @Test
    void suppressionIsGreedyNotTransitive() {
        // a suppresses b; b would suppress c, but b is gone, and a and c barely overlap: c stays.
        double[][] boxes = {{0, 0, 10, 10}, {2, 0, 12, 10}, {4, 0, 14, 10}};
        // IoU(a,b) = 80/120 = 0.667, IoU(b,c) = 0.667, IoU(a,c) = 60/140 = 0.43
        assertArrayEquals(new int[] {0, 2}, BoxNms.keep(boxes, new float[] {3, 2, 1}, 0.5));
    }

    @Test
    void equalScoresKeepInputOrder() {
        double[][] boxes = {{0, 0, 10, 10}, {0, 0, 10, 10}, {50, 50, 60, 60}};
        assertArrayEquals(new int[] {0, 2}, BoxNms.keep(boxes, new float[] {0.9f, 0.9f, 0.9f}, 0.7));
        assertArrayEquals(new int[0], BoxNms.keep(new double[0][], new float[0], 0.7));
    }

    @Test
    void mismatchedInputsAreRejected() {
        assertEquals("2 boxes but 1 scores", assertThrows(IllegalArgumentException.class,
                () -> BoxNms.keep(new double[][] {{0, 0, 1, 1}, {0, 0, 1, 1}}, new float[] {1}, 0.5)).getMessage());
        assertEquals("box 0 must be [x0, y0, x1, y1]", assertThrows(IllegalArgumentException.class,
                () -> BoxNms.keep(new double[][] {{0, 0, 1}}, new float[] {1}, 0.5)).getMessage());
    }
}
