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
