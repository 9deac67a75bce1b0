package io.samstream.gpu.sam2;

/**
 * A prompt that adds an object on the frame it arrives with: a box and/or points in model-input pixels (the
 * S x S frame the model sees). Labels: 1 foreground, 0 background. A box becomes two corner points (labels
 * 2, 3) before any points, as SAM2VideoPredictor.add_new_points_or_box does.
 */
public record ObjectPrompt(int objectId, float[] box, float[][] points, int[] labels) {
    public ObjectPrompt {
        points = points == null ? new float[0][] : points;
        labels = labels == null ? new int[0] : labels;
        if (points.length != labels.length) {
            throw new IllegalArgumentException(points.length + " points with " + labels.length + " labels");
        }
        if (box == null && points.length == 0) {
            throw new IllegalArgumentException("object " + objectId + ": a prompt needs a box or points");
        }
        if (box != null && box.length != 4) {
            throw new IllegalArgumentException("object " + objectId + ": a box is [x0, y0, x1, y1]");
        }
        for (int l : labels) {
            if (l != 0 && l != 1) {
                throw new IllegalArgumentException("object " + objectId + ": point label " + l + " (0 or 1)");
            }
        }
    }

    public static ObjectPrompt box(int objectId, float x0, float y0, float x1, float y1) {
        return new ObjectPrompt(objectId, new float[] {x0, y0, x1, y1}, null, null);
    }

    public static ObjectPrompt point(int objectId, float x, float y, boolean foreground) {
        return new ObjectPrompt(objectId, null, new float[][] {{x, y}}, new int[] {foreground ? 1 : 0});
    }

    /** The points the prompt encoder sees: box corners (labels 2, 3) first, then the points. */
    public float[][] allPoints() {
        int b = box == null ? 0 : 2;
        float[][] out = new float[b + points.length][];
        if (box != null) {
            out[0] = new float[] {box[0], box[1]};
            out[1] = new float[] {box[2], box[3]};
        }
        for (int i = 0; i < points.length; i++) {
            out[b + i] = points[i].clone();
        }
        return out;
    }

    public int[] allLabels() {
        int b = box == null ? 0 : 2;
        int[] out = new int[b + labels.length];
        if (box != null) {
            out[0] = 2;
            out[1] = 3;
        }
        System.arraycopy(labels, 0, out, b, labels.length);
        return out;
    }
}
