package io.samstream.stream.track.kalman;

import io.samstream.gpu.tensor.Tensor;

/** Operations on low-res mask logits {@code [1, L, L]} and their binary masks (logit > 0), row-major. */
public final class LowResMask {
    private LowResMask() {}

    /** The binary mask: logit above 0, SAM's mask threshold. */
    public static boolean[] binary(Tensor logits) {
        float[] d = logits.data();
        boolean[] m = new boolean[d.length];
        for (int i = 0; i < d.length; i++) {
            m[i] = d[i] > 0;
        }
        return m;
    }

    public static long area(boolean[] m) {
        long n = 0;
        for (boolean b : m) {
            if (b) {
                n++;
            }
        }
        return n;
    }

    /** Intersection over union; 0 when both are empty. */
    public static double iou(boolean[] a, boolean[] b) {
        long inter = 0;
        long union = 0;
        for (int i = 0; i < a.length; i++) {
            if (a[i] && b[i]) {
                inter++;
            }
            if (a[i] || b[i]) {
                union++;
            }
        }
        return union == 0 ? 0 : (double) inter / union;
    }

    /** How much of {@code a} lies in {@code b} (0 to 1); 0 when {@code a} is empty. */
    public static double coveredBy(boolean[] a, boolean[] b) {
        long inter = 0;
        long n = 0;
        for (int i = 0; i < a.length; i++) {
            if (a[i]) {
                n++;
                if (b[i]) {
                    inter++;
                }
            }
        }
        return n == 0 ? 0 : (double) inter / n;
    }

    /**
     * The share of each cell of a {@code side x side} grid (the image embedding's) that an {@code l x l} mask
     * covers, row-major: the weights that pool the embedding under the mask ({@code l} a multiple of
     * {@code side}).
     */
    public static float[] cellWeights(boolean[] m, int l, int side) {
        if (l % side != 0 || m.length != l * l) {
            throw new IllegalArgumentException("a " + l + "x" + l + " mask of " + m.length + " values does not tile a "
                    + side + "x" + side + " grid");
        }
        int f = l / side;
        float[] w = new float[side * side];
        float unit = 1f / (f * f);
        for (int y = 0; y < l; y++) {
            int row = (y / f) * side;
            for (int x = 0; x < l; x++) {
                if (m[y * l + x]) {
                    w[row + x / f] += unit;
                }
            }
        }
        return w;
    }

    /** The centroid {@code [x, y]} in cells of an {@code l} x {@code l} mask; null when it is empty. */
    public static double[] centroid(boolean[] m, int l) {
        double sx = 0;
        double sy = 0;
        long n = 0;
        for (int y = 0; y < l; y++) {
            for (int x = 0; x < l; x++) {
                if (m[y * l + x]) {
                    sx += x;
                    sy += y;
                    n++;
                }
            }
        }
        return n == 0 ? null : new double[] {sx / n, sy / n};
    }

    /** Whether cell (x, y), rounded, is in the mask. */
    public static boolean contains(boolean[] m, int l, double x, double y) {
        int cx = (int) Math.round(x);
        int cy = (int) Math.round(y);
        return cx >= 0 && cy >= 0 && cx < l && cy < l && m[cy * l + cx];
    }

    /**
     * The logits moved by (dx, dy) cells, the cells moved in from outside taking the nearest edge cell's
     * value (what the demo model saw in training: grid_sample with border padding).
     */
    public static Tensor shift(Tensor logits, int dx, int dy) {
        int l = logits.dim(logits.rank() - 1);
        if (dx == 0 && dy == 0) {
            return logits;
        }
        float[] src = logits.data();
        float[] out = new float[src.length];
        for (int y = 0; y < l; y++) {
            int sy = Math.max(0, Math.min(l - 1, y - dy));
            for (int x = 0; x < l; x++) {
                int sx = Math.max(0, Math.min(l - 1, x - dx));
                out[y * l + x] = src[sy * l + sx];
            }
        }
        return new Tensor(out, logits.shape());
    }

    /** Output {@code i} of multimask logits {@code [N, L, L]} as {@code [1, L, L]}. */
    public static Tensor select(Tensor logits, int i) {
        int l = logits.dim(logits.rank() - 1);
        float[] d = new float[l * l];
        System.arraycopy(logits.data(), i * l * l, d, 0, l * l);
        return new Tensor(d, 1, l, l);
    }
}
