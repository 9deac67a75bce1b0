package io.samstream.gpu.sam3;

/**
 * An exemplar box prompt: a box around one example of what to find (positive) or of what not to find (negative),
 * in the model input's normalized coordinates (centre x, centre y, width, height, all in [0, 1]), as Meta's
 * {@code Sam3Processor.add_geometric_prompt} takes it.
 */
public record ExemplarBox(float cx, float cy, float w, float h, boolean positive) {
    public ExemplarBox {
        for (float v : new float[] {cx, cy, w, h}) {
            if (!Float.isFinite(v) || v < 0f || v > 1f) {
                throw new IllegalArgumentException("exemplar box (" + cx + ", " + cy + ", " + w + ", " + h
                        + ") must be normalized centre x, centre y, width, height in [0, 1]");
            }
        }
    }

    /** A box from pixel corners (x0, y0, x1, y1) of an image of the given size. */
    public static ExemplarBox fromCorners(float x0, float y0, float x1, float y1, int width, int height,
            boolean positive) {
        float a = Math.max(0f, Math.min(x0, x1)) / width;
        float b = Math.max(0f, Math.min(y0, y1)) / height;
        float c = Math.min(width, Math.max(x0, x1)) / (float) width;
        float e = Math.min(height, Math.max(y0, y1)) / (float) height;
        return new ExemplarBox((a + c) / 2, (b + e) / 2, c - a, e - b, positive);
    }
}
