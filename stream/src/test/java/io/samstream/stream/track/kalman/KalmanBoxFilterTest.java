package io.samstream.stream.track.kalman;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class KalmanBoxFilterTest {
    private static double[] box(double cx, double cy, double w, double h) {
        return new double[] {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2};
    }

    @Test
    void aBoxAtRestStaysWhereItIs() {
        KalmanBoxFilter f = new KalmanBoxFilter(box(50, 40, 20, 10));
        for (int i = 0; i < 10; i++) {
            f.predict();
            f.update(box(50, 40, 20, 10));
        }
        f.predict();
        assertArrayEquals(box(50, 40, 20, 10), f.box(), 1e-6);
        assertArrayEquals(new double[] {0, 0}, f.velocity(), 1e-6);
    }

    @Test
    void learnsAConstantVelocityAndPredictsTheNextBox() {
        double vx = 3;
        double vy = -2;
        KalmanBoxFilter f = new KalmanBoxFilter(box(100, 100, 30, 20));
        for (int i = 1; i <= 20; i++) {
            f.predict();
            f.update(box(100 + vx * i, 100 + vy * i, 30, 20));
        }
        assertArrayEquals(new double[] {vx, vy}, f.velocity(), 0.05);
        f.predict();
        assertArrayEquals(box(100 + vx * 21, 100 + vy * 21, 30, 20), f.box(), 0.2);
    }

    @Test
    void predictionsCoastOnTheVelocityWithoutMeasurements() {
        KalmanBoxFilter f = new KalmanBoxFilter(box(0, 0, 10, 10));
        for (int i = 1; i <= 15; i++) {
            f.predict();
            f.update(box(4 * i, 0, 10, 10));
        }
        // Three frames without a measurement (an occlusion): the box keeps moving at 4 px per frame.
        for (int i = 0; i < 3; i++) {
            f.predict();
        }
        double[] b = f.box();
        assertEquals(4 * 18, (b[0] + b[2]) / 2, 0.5);
        assertEquals(10, b[2] - b[0], 0.5);
    }

    @Test
    void aHeldSizeStopsShrinkingWhileThePositionCoastsOn() {
        KalmanBoxFilter f = new KalmanBoxFilter(box(0, 0, 60, 60));
        for (int i = 1; i <= 15; i++) {
            f.predict();
            f.update(box(3 * i, 0, 60 - i, 60)); // shrinking by 1 px per frame
        }
        double width = f.box()[2] - f.box()[0];
        KalmanBoxFilter free = new KalmanBoxFilter(box(0, 0, 60, 60));
        for (int i = 1; i <= 15; i++) {
            free.predict();
            free.update(box(3 * i, 0, 60 - i, 60));
        }
        for (int i = 0; i < 10; i++) {
            f.holdSize();
            f.predict();
            free.predict();
        }
        double[] b = f.box();
        assertEquals(width, b[2] - b[0], 1e-6, "held");
        assertEquals(3 * 25, (b[0] + b[2]) / 2, 1.5);
        assertTrue(free.box()[2] - free.box()[0] < width - 5, "without holding, the trend goes on");
    }

    @Test
    void aMeasurementPullsTheEstimateTowardsIt() {
        KalmanBoxFilter f = new KalmanBoxFilter(box(50, 50, 20, 20));
        f.predict();
        f.update(box(60, 50, 20, 20));
        double cx = (f.box()[0] + f.box()[2]) / 2;
        assertTrue(cx > 50 && cx < 60, "between the prediction and the measurement: " + cx);
        assertTrue(f.velocity()[0] > 0, "and it starts to believe in the motion");
    }

    @Test
    void rejectsABoxWithSwappedCorners() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new KalmanBoxFilter(new double[] {10, 10, 5, 20}));
        assertTrue(e.getMessage().contains("x1 >= x0"), e.getMessage());
        KalmanBoxFilter f = new KalmanBoxFilter(box(5, 5, 2, 2));
        assertThrows(IllegalArgumentException.class, () -> f.update(new double[] {0, 0, Double.NaN, 1}));
    }
}
