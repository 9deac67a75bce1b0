package io.samstream.gpu.model;

import io.samstream.gpu.tensor.Tensor;

/**
 * What an object looks like to the encoder: the image embedding averaged over the cells its mask covers,
 * weighted by how much of each cell the mask covers. The tracker keeps such means per track (appearance
 * memory) and compares a new mask's mean with them against the image's mean ({@link #similarity}); the
 * means of the image and of its regions give the layout it tells scene cuts by.
 *
 * <p>This is the CPU reference; the CUDA backend computes the same sum on the device from the embedding's
 * ring slot ({@link SamBackend#poolEmbeddings}).
 */
public final class EmbeddingPool {
    private EmbeddingPool() {}

    /**
     * One mask's pooling request: its frame's embedding and its weights, one per embedding cell
     * ({@code [E * E]}, row-major, each in [0, 1]).
     */
    public record Request(ImageEmbedding embedding, float[] weights) {
        public Request {
            if (embedding == null || weights == null) {
                throw new IllegalArgumentException("a pooling request needs an embedding and weights");
            }
        }
    }

    /**
     * The mean of {@code embedding} {@code [1, C, E, E]} under {@code weights}, per channel; null when the weights
     * are all zero (an empty mask has no appearance).
     *
     * @throws IllegalArgumentException when the weights do not have one value per cell
     */
    public static float[] pool(Tensor embedding, float[] weights) {
        int[] s = embedding.shape();
        if (s.length != 4 || s[0] != 1) {
            throw new IllegalArgumentException("pooling needs one embedding [1, C, E, E], got " + embedding.shapeString());
        }
        int c = s[1];
        int cells = s[2] * s[3];
        if (weights.length != cells) {
            throw new IllegalArgumentException("pooling weights have " + weights.length + " values for an embedding of "
                    + s[2] + "x" + s[3] + " cells");
        }
        double total = 0;
        for (float w : weights) {
            total += w;
        }
        if (!(total > 0)) {
            return null;
        }
        float[] data = embedding.data();
        double[] sum = new double[c];
        for (int ch = 0; ch < c; ch++) {
            int base = ch * cells;
            double acc = 0;
            for (int p = 0; p < cells; p++) {
                float w = weights[p];
                if (w != 0) {
                    acc += w * data[base + p];
                }
            }
            sum[ch] = acc;
        }
        float[] mean = new float[c];
        for (int ch = 0; ch < c; ch++) {
            mean[ch] = (float) (sum[ch] / total);
        }
        return mean;
    }

    /**
     * One appearance map's request ({@link SamBackend#cellSimilarities}): a frame's embedding, an object's remembered
     * mean {@code look} and the image's mean {@code mean} (both {@code [C]}), over the image's first {@code cols x
     * rows} cells (the rest of the embedding is padding), each cell described by the mean of the {@code windowCols x
     * windowRows} cells around it (about the object's size: what a mask of it there would pool).
     */
    public record CellRequest(ImageEmbedding embedding, float[] look, float[] mean, int cols, int rows, int windowCols,
            int windowRows) {
        public CellRequest {
            if (embedding == null || look == null || mean == null) {
                throw new IllegalArgumentException("an appearance map needs an embedding, a look and a mean");
            }
            if (look.length != mean.length) {
                throw new IllegalArgumentException("a look of " + look.length + " channels against a mean of "
                        + mean.length);
            }
            if (cols < 1 || rows < 1 || windowCols < 1 || windowRows < 1) {
                throw new IllegalArgumentException("an appearance map of " + cols + "x" + rows + " cells, windows of "
                        + windowCols + "x" + windowRows);
            }
        }
    }

    /**
     * The first and last cell (inclusive) of the window of {@code size} cells around cell {@code i} along an axis of
     * {@code n} image cells: {@code (size - 1) / 2} before it, {@code size / 2} after it, clipped to the image.
     */
    public static int windowStart(int i, int size) {
        return Math.max(0, i - (size - 1) / 2);
    }

    /** See {@link #windowStart}. */
    public static int windowEnd(int i, int size, int n) {
        return Math.min(n - 1, i + size / 2);
    }

    /**
     * The appearance map of {@code embedding} {@code [1, C, E, E]} over its first {@code cols x rows} cells, row-major
     * {@code [rows * cols]}: for each cell, {@link #similarity}{@code (w, look, mean)} where {@code w} is the mean of
     * the cells of its window ({@link #windowStart}, {@link #windowEnd}; equal weights). Where a lost object could be,
     * its look stands out of this map (the tracker's appearance search). Summed-area tables per channel: {@code O(C E
     * E)} whatever the window.
     *
     * @throws IllegalArgumentException when the shapes do not agree
     */
    public static float[] cellSimilarity(Tensor embedding, float[] look, float[] mean, int cols, int rows,
            int windowCols, int windowRows) {
        int[] s = embedding.shape();
        if (s.length != 4 || s[0] != 1) {
            throw new IllegalArgumentException("an appearance map needs one embedding [1, C, E, E], got "
                    + embedding.shapeString());
        }
        int c = s[1];
        int e = s[3];
        if (look.length != c || mean.length != c) {
            throw new IllegalArgumentException("a look of " + look.length + " channels for an embedding of " + c);
        }
        if (cols < 1 || rows < 1 || cols > e || rows > s[2] || windowCols < 1 || windowRows < 1) {
            throw new IllegalArgumentException("an appearance map of " + cols + "x" + rows + " cells (windows "
                    + windowCols + "x" + windowRows + ") of a " + s[2] + "x" + e + " embedding");
        }
        float[] data = embedding.data();
        int plane = s[2] * e;
        double mm = 0;
        double[] b = new double[c];
        for (int k = 0; k < c; k++) {
            b[k] = (double) look[k] - mean[k];
            mm += b[k] * b[k];
        }
        int n = cols * rows;
        double[] dot = new double[n];
        double[] dd = new double[n];
        double[] sat = new double[(rows + 1) * (cols + 1)];
        for (int k = 0; k < c; k++) {
            // sat[(y + 1) * (cols + 1) + x + 1]: the sum of channel k over cells [0, x] x [0, y]
            for (int y = 0; y < rows; y++) {
                double row = 0;
                for (int x = 0; x < cols; x++) {
                    row += data[k * plane + y * e + x];
                    sat[(y + 1) * (cols + 1) + x + 1] = sat[y * (cols + 1) + x + 1] + row;
                }
            }
            for (int y = 0; y < rows; y++) {
                int y0 = windowStart(y, windowRows);
                int y1 = windowEnd(y, windowRows, rows) + 1;
                for (int x = 0; x < cols; x++) {
                    int x0 = windowStart(x, windowCols);
                    int x1 = windowEnd(x, windowCols, cols) + 1;
                    double sum = sat[y1 * (cols + 1) + x1] - sat[y0 * (cols + 1) + x1] - sat[y1 * (cols + 1) + x0]
                            + sat[y0 * (cols + 1) + x0];
                    double a = sum / ((double) (x1 - x0) * (y1 - y0)) - mean[k];
                    dot[y * cols + x] += a * b[k];
                    dd[y * cols + x] += a * a;
                }
            }
        }
        float[] out = new float[n];
        for (int i = 0; i < n; i++) {
            out[i] = dd[i] + mm > 0 ? (float) (2 * dot[i] / (dd[i] + mm)) : 0f;
        }
        return out;
    }

    /**
     * How much a mask's mean {@code d} looks like an object's remembered mean {@code m}, both against the image's
     * mean {@code g}: {@code 2 (d - g).(m - g) / (|d - g|^2 + |m - g|^2)}, which is 1 when {@code d = m}, 0 for a mask
     * that looks like the image as a whole, negative for one that stands out the other way, and {@code 2a / (1 + a^2)}
     * for a mask whose mean is a share {@code a} of the object's contrast (a mask mostly on background beside the
     * object scores low, where a cosine of the contrasts would not). 0 when any is missing.
     */
    public static double similarity(float[] d, float[] m, float[] g) {
        if (d == null || m == null || g == null) {
            return 0;
        }
        if (d.length != m.length || d.length != g.length) {
            throw new IllegalArgumentException("means of " + d.length + ", " + m.length + " and " + g.length
                    + " channels");
        }
        double dot = 0;
        double dd = 0;
        double mm = 0;
        for (int i = 0; i < d.length; i++) {
            double a = (double) d[i] - g[i];
            double b = (double) m[i] - g[i];
            dot += a * b;
            dd += a * a;
            mm += b * b;
        }
        return dd + mm > 0 ? 2 * dot / (dd + mm) : 0;
    }
}
