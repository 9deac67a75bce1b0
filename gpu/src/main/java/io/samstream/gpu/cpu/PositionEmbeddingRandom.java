package io.samstream.gpu.cpu;

/**
 * SAM's random Fourier position encoding: a point (x, y) in [0, 1]^2 maps to
 * [sin(2 pi ((2x-1, 2y-1) · G)), cos(2 pi ((2x-1, 2y-1) · G))] for the stored gaussian matrix G [2, C/2].
 * Arithmetic follows the reference's fp32 tensors; sin and cos are computed in double and rounded.
 */
final class PositionEmbeddingRandom {
    private static final float TWO_PI = (float) (2 * Math.PI);

    private final float[] gx;
    private final float[] gy;

    /** @param gaussian the [2, half] matrix, row-major */
    PositionEmbeddingRandom(float[] gaussian, int half) {
        if (gaussian.length != 2 * half) {
            throw new IllegalArgumentException("gaussian matrix of " + gaussian.length + " values is not 2x" + half);
        }
        this.gx = java.util.Arrays.copyOfRange(gaussian, 0, half);
        this.gy = java.util.Arrays.copyOfRange(gaussian, half, 2 * half);
    }

    /** Output width C = 2 * half. */
    int dim() {
        return 2 * gx.length;
    }

    /** Encodes a point already normalized to [0, 1]^2 into out[off, off + C). */
    void encode(float x, float y, float[] out, int off) {
        int half = gx.length;
        float cx = 2 * x - 1;
        float cy = 2 * y - 1;
        for (int k = 0; k < half; k++) {
            float v = TWO_PI * (cx * gx[k] + cy * gy[k]);
            out[off + k] = (float) Math.sin(v);
            out[off + half + k] = (float) Math.cos(v);
        }
    }

    /**
     * The encoding of every cell centre of an h x w grid, ((j + 0.5) / w, (i + 0.5) / h), channels-last
     * [h*w, C] (the reference's {@code get_dense_pe}, before its permute to [C, h, w]).
     */
    float[] dense(int h, int w) {
        int c = dim();
        float[] out = new float[h * w * c];
        for (int i = 0; i < h; i++) {
            float y = (i + 0.5f) / h;
            for (int j = 0; j < w; j++) {
                encode((j + 0.5f) / w, y, out, (i * w + j) * c);
            }
        }
        return out;
    }
}
