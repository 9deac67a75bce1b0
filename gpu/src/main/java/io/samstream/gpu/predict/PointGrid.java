package io.samstream.gpu.predict;

/**
 * The point prompts of automatic mask generation: an n x n grid at the centres of the cells of an
 * n x n partition of the image, as segment-anything's {@code build_point_grid}.
 *
 * <p>The normalized coordinates are numpy's {@code linspace(1/(2n), 1 - 1/(2n), n)} computed the way numpy
 * computes it (start + i * step in float64, the last value set to the stop exactly), so they equal the
 * reference's values bit for bit. Points are ordered row by row: x varies fastest.
 */
public final class PointGrid {
    private PointGrid() {}

    /** {@code build_point_grid(n)}: n * n points {@code (x, y)} in [0, 1], row-major. */
    public static double[][] normalized(int pointsPerSide) {
        if (pointsPerSide < 1) {
            throw new IllegalArgumentException("points per side must be at least 1, got " + pointsPerSide);
        }
        double[] side = linspace(1.0 / (2 * pointsPerSide), 1 - 1.0 / (2 * pointsPerSide), pointsPerSide);
        double[][] points = new double[pointsPerSide * pointsPerSide][];
        for (int row = 0; row < pointsPerSide; row++) {
            for (int col = 0; col < pointsPerSide; col++) {
                points[row * pointsPerSide + col] = new double[] {side[col], side[row]};
            }
        }
        return points;
    }

    /**
     * The grid in pixels of a {@code width x height} image: x scaled by the width, y by the height
     * (the reference's {@code point_grid * [w, h]}).
     */
    public static double[][] forImage(int pointsPerSide, int width, int height) {
        if (width <= 0 || height <= 0) {
            throw new IllegalArgumentException("image size must be positive, got " + width + "x" + height);
        }
        double[][] points = normalized(pointsPerSide);
        for (double[] p : points) {
            p[0] *= width;
            p[1] *= height;
        }
        return points;
    }

    /** numpy's {@code linspace(start, stop, num)} (endpoint included), value for value. */
    static double[] linspace(double start, double stop, int num) {
        double[] y = new double[num];
        if (num == 1) {
            y[0] = start;
            return y;
        }
        double step = (stop - start) / (num - 1);
        for (int i = 0; i < num; i++) {
            y[i] = i * step + start;
        }
        y[num - 1] = stop;
        return y;
    }
}
