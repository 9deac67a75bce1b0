package io.samstream.gpu.model;

import io.samstream.gpu.tensor.Tensor;

/**
 * One prompt set for the mask decoder, in <em>model input</em> coordinates: pixels of the image after
 * it was resized so that its longest side is {@link SamConfig#imageSize()} (what the reference
 * {@code SamPredictor.predict_torch} receives). {@code SamPredictor} converts from original-image pixels.
 *
 * @param points    point coordinates {@code [n][2]} as (x, y), or null
 * @param labels    one label per point: 1 foreground, 0 background (-1 is the reference's padding), or null
 * @param box       {@code [x0, y0, x1, y1]}, or null
 * @param maskInput low-resolution mask logits {@code [1, L, L]} with L = {@link SamConfig#lowResSize()}, or null
 */
public record Prompt(float[][] points, int[] labels, float[] box, Tensor maskInput) {
    public Prompt {
        if ((points == null) != (labels == null)) {
            throw new IllegalArgumentException("points and labels go together: give both or neither");
        }
        if (points != null && points.length != labels.length) {
            throw new IllegalArgumentException(
                    points.length + " points but " + labels.length + " labels: each point needs one label");
        }
        if (points != null) {
            for (float[] p : points) {
                if (p.length != 2) {
                    throw new IllegalArgumentException("a point is (x, y), got " + p.length + " numbers");
                }
            }
        }
        if (box != null && box.length != 4) {
            throw new IllegalArgumentException("a box is [x0, y0, x1, y1], got " + box.length + " numbers");
        }
    }

    public int pointCount() {
        return points == null ? 0 : points.length;
    }

    public boolean hasBox() {
        return box != null;
    }
}
