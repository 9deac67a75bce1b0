package io.samstream.gpu.sam2;

/**
 * SAM 2's fixed position encodings: the 2-D sine encoding of feature maps ({@code PositionEmbeddingSine},
 * normalized, temperature 10000) and the 1-D sine encoding of the object pointers' frame distances
 * ({@code get_1d_sine_pe}). Computed in float as the reference does.
 */
public final class PositionEncodings {
    private PositionEncodings() {}

    private static final float TWO_PI = (float) (2 * Math.PI);

    /**
     * The sine encoding of an h x w map with {@code dim} channels, channels-last [h*w, dim]: the first half
     * encodes y, the second x, each as (sin, cos) pairs of (pos / 10000^(2*(j/2)/(dim/2))), positions
     * (1..h) / (h + 1e-6) * 2 pi.
     */
    public static float[] sine2d(int h, int w, int dim) {
        int half = dim / 2;
        float[] dimT = new float[half];
        for (int j = 0; j < half; j++) {
            dimT[j] = (float) Math.pow(10000.0, (float) (2 * (j / 2)) / half);
        }
        float[] out = new float[h * w * dim];
        for (int y = 0; y < h; y++) {
            float ey = (y + 1) / (h + 1e-6f) * TWO_PI;
            for (int x = 0; x < w; x++) {
                float ex = (x + 1) / (w + 1e-6f) * TWO_PI;
                int o = (y * w + x) * dim;
                for (int j = 0; j < half; j += 2) {
                    float py = ey / dimT[j];
                    float py1 = ey / dimT[j + 1];
                    out[o + j] = (float) Math.sin(py);
                    out[o + j + 1] = (float) Math.cos(py1);
                    float px = ex / dimT[j];
                    float px1 = ex / dimT[j + 1];
                    out[o + half + j] = (float) Math.sin(px);
                    out[o + half + j + 1] = (float) Math.cos(px1);
                }
            }
        }
        return out;
    }

    /** {@code get_1d_sine_pe(pos, dim)}: [sin(pos / t_j) for j, cos(pos / t_j) for j], t_j = 10000^(2*(j/2)/(dim/2)). */
    static float[] sine1d(float pos, int dim) {
        int half = dim / 2;
        float[] out = new float[dim];
        for (int j = 0; j < half; j++) {
            float t = (float) Math.pow(10000.0, (float) (2 * (j / 2)) / half);
            float p = pos / t;
            out[j] = (float) Math.sin(p);
            out[half + j] = (float) Math.cos(p);
        }
        return out;
    }
}
