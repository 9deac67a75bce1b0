package io.samstream.gpu.predict;

import java.util.Locale;

/**
 * One prompt set in <em>original image</em> pixels, as users give it (the reference
 * {@code SamPredictor.predict} arguments): points with labels, a box, or both. Coordinates are doubles
 * because the reference scales them in float64 before the model sees them as float32.
 *
 * @param points    (x, y) points, or null
 * @param labels    per point: 1 foreground, 0 background; or null
 * @param box       {@code [x0, y0, x1, y1]}, or null
 * @param multimask true for the 3 multimask outputs, false for the single best mask
 */
public record PromptSet(double[][] points, int[] labels, double[] box, boolean multimask) {

    public int pointCount() {
        return points == null ? 0 : points.length;
    }

    /**
     * Checks the set against an image of {@code width x height}: at least one point or a box, one
     * label 0/1 per point, every coordinate finite and inside the image, box corners ordered.
     *
     * @throws IllegalArgumentException naming the offending point or box
     */
    public void validate(int width, int height) {
        if (points == null && box == null) {
            throw new IllegalArgumentException("a prompt set needs at least one point or a box");
        }
        if ((points == null) != (labels == null)) {
            throw new IllegalArgumentException("points and labels go together: give both or neither");
        }
        if (points != null) {
            if (points.length == 0) {
                throw new IllegalArgumentException("an empty point list: give at least one point or null");
            }
            if (points.length != labels.length) {
                throw new IllegalArgumentException(points.length + " points but " + labels.length + " labels");
            }
            for (int i = 0; i < points.length; i++) {
                double[] p = points[i];
                if (p == null || p.length != 2) {
                    throw new IllegalArgumentException("point " + i + " must be [x, y]");
                }
                requireInside("point " + i + " " + fmt(p[0], p[1]), p[0], p[1], width, height);
                if (labels[i] != 0 && labels[i] != 1) {
                    throw new IllegalArgumentException(
                            "point " + i + " has label " + labels[i] + " (1 = foreground, 0 = background)");
                }
            }
        }
        if (box != null) {
            if (box.length != 4) {
                throw new IllegalArgumentException("a box is [x0, y0, x1, y1], got " + box.length + " numbers");
            }
            String name = "box " + fmt(box[0], box[1]) + "-" + fmt(box[2], box[3]);
            requireInside(name, box[0], box[1], width, height);
            requireInside(name, box[2], box[3], width, height);
            if (box[2] < box[0] || box[3] < box[1]) {
                throw new IllegalArgumentException(name + " has its corners swapped: x0 <= x1 and y0 <= y1");
            }
        }
    }

    private static void requireInside(String what, double x, double y, int width, int height) {
        if (!Double.isFinite(x) || !Double.isFinite(y)) {
            throw new IllegalArgumentException(what + " is not a finite coordinate");
        }
        if (x < 0 || y < 0 || x > width || y > height) {
            throw new IllegalArgumentException(what + " is outside the " + width + "x" + height + " image");
        }
    }

    private static String fmt(double x, double y) {
        return String.format(Locale.ROOT, "(%s, %s)", num(x), num(y));
    }

    private static String num(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e9 ? Long.toString((long) v) : Double.toString(v);
    }
}
