package io.samstream.stream.track;

import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.image.ResizeLongestSide;
import io.samstream.gpu.model.Prompt;
import java.util.ArrayList;
import java.util.List;

/**
 * The coordinate frames of one frame size: original pixels, the model's input (longest side resized to
 * S, padded to S x S) and the low-res mask grid (L x L over the padded input). Converts prompts between them.
 */
public final class FrameGeometry {
    private final ImageSize original;
    private final ImageSize resized;
    private final int inputSize;
    private final int lowResSize;
    /** Original pixels to model input pixels, per axis (the reference's apply_coords ratios). */
    private final double sx;
    private final double sy;

    public FrameGeometry(int width, int height, int inputSize, int lowResSize) {
        this.original = new ImageSize(height, width);
        this.resized = ResizeLongestSide.preprocessShape(height, width, inputSize);
        this.inputSize = inputSize;
        this.lowResSize = lowResSize;
        this.sx = (double) resized.width() / width;
        this.sy = (double) resized.height() / height;
    }

    public ImageSize original() {
        return original;
    }

    public ImageSize resized() {
        return resized;
    }

    public int width() {
        return original.width();
    }

    public int height() {
        return original.height();
    }

    public int lowResSize() {
        return lowResSize;
    }

    /** True when this is the geometry of a {@code width} x {@code height} frame. */
    public boolean sameFrameSize(int width, int height) {
        return original.width() == width && original.height() == height;
    }

    /** A box {@code [x0, y0, x1, y1]} in original pixels, clamped to the frame, in model input pixels. */
    public float[] modelBox(double[] box) {
        double x0 = clamp(box[0], original.width());
        double y0 = clamp(box[1], original.height());
        double x1 = clamp(box[2], original.width());
        double y1 = clamp(box[3], original.height());
        return new float[] {(float) (x0 * sx), (float) (y0 * sy), (float) (x1 * sx), (float) (y1 * sy)};
    }

    /** The centre of low-res cell (x, y) in model input pixels. */
    public float[] lowResToModel(double x, double y) {
        double scale = (double) inputSize / lowResSize;
        return new float[] {(float) ((x + 0.5) * scale), (float) ((y + 0.5) * scale)};
    }

    /** A displacement in original pixels as whole low-res cells {@code [dx, dy]}. */
    public int[] lowResShift(double dx, double dy) {
        double scale = (double) lowResSize / inputSize;
        return new int[] {(int) Math.round(dx * sx * scale), (int) Math.round(dy * sy * scale)};
    }

    /**
     * A user's prompt (original pixels) as the model's prompt, as the reference predictor transforms it.
     *
     * @throws IllegalArgumentException when a point or box corner lies outside the frame (names the object)
     */
    public Prompt modelPrompt(ObjectPrompt o) {
        float[][] points = null;
        int[] labels = null;
        if (o.points() != null && o.points().length > 0) {
            points = new float[o.points().length][];
            labels = new int[points.length];
            for (int i = 0; i < points.length; i++) {
                double[] p = o.points()[i];
                inside(o, "point", p[0], p[1]);
                points[i] = new float[] {(float) (p[0] * sx), (float) (p[1] * sy)};
                labels[i] = o.label(i);
            }
        }
        float[] box = null;
        if (o.box() != null) {
            double[] b = o.box();
            inside(o, "box corner", b[0], b[1]);
            inside(o, "box corner", b[2], b[3]);
            box = new float[] {(float) (b[0] * sx), (float) (b[1] * sy), (float) (b[2] * sx), (float) (b[3] * sy)};
        }
        return new Prompt(points, labels, box, null);
    }

    /** A lone point is ambiguous (part, object, whole): SAM's predictor advises its three masks. */
    public static boolean wantsMultimask(ObjectPrompt o) {
        return o.box() == null && o.points().length == 1;
    }

    private void inside(ObjectPrompt o, String what, double x, double y) {
        if (x < 0 || y < 0 || x > original.width() || y > original.height()) {
            throw new IllegalArgumentException("object " + o.id() + ": " + what + " (" + x + ", " + y
                    + ") lies outside the " + original.width() + "x" + original.height() + " frame");
        }
    }

    private static double clamp(double v, int max) {
        return Math.max(0, Math.min(max, v));
    }

    /**
     * Weights 1 on the cells of a {@code side x side} grid over the model's input that the image covers (not its
     * padding), 0 elsewhere: pooling the embedding with them describes the whole image.
     */
    public float[] imageCells(int side) {
        return region(side, 0, 0, 1);
    }

    /**
     * The image's cells of a {@code side x side} grid cut into {@code n x n} regions, row by row: weights 1 on the
     * cells of each (pooled, they tell the scene's layout).
     */
    public List<float[]> imageRegions(int side, int n) {
        List<float[]> out = new ArrayList<>(n * n);
        for (int ry = 0; ry < n; ry++) {
            for (int rx = 0; rx < n; rx++) {
                out.add(region(side, ry, rx, n));
            }
        }
        return out;
    }

    private float[] region(int side, int ry, int rx, int n) {
        int rows = (int) Math.ceil((double) resized.height() * side / inputSize);
        int cols = (int) Math.ceil((double) resized.width() * side / inputSize);
        float[] w = new float[side * side];
        for (int y = ry * rows / n; y < (ry + 1) * rows / n; y++) {
            java.util.Arrays.fill(w, y * side + rx * cols / n, y * side + (rx + 1) * cols / n, 1f);
        }
        return w;
    }

    /** Whether a box {@code [x0, y0, x1, y1]} in pixels touches the frame's border. */
    public boolean touchesEdge(double[] box) {
        return box[0] <= 0 || box[1] <= 0 || box[2] >= width() || box[3] >= height();
    }
}
