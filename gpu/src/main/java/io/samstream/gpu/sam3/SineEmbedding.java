package io.samstream.gpu.sam3;

/**
 * The sine encodings of coordinates in [0, 1] that SAM 3's detector uses, in float as torch computes them: a value
 * v becomes, over {@code feats} channels, (sin, cos) pairs of v * 2 pi / 10000^(2 (j / 2) / feats), sine at even
 * channels and cosine at odd ones.
 */
final class SineEmbedding {
    private SineEmbedding() {}

    private static final float TWO_PI = (float) (2 * Math.PI);

    /** Writes the encoding of v into out[off, off + feats). */
    static void encode(float v, int feats, float[] out, int off) {
        float e = v * TWO_PI;
        for (int j = 0; j < feats; j++) {
            float t = (float) Math.pow(10000.0, (float) (2 * (j / 2)) / feats);
            float p = e / t;
            out[off + j] = (float) (j % 2 == 0 ? Math.sin(p) : Math.cos(p));
        }
    }

    /**
     * {@code gen_sineembed_for_position} of boxes [n, 4] (cx, cy, w, h) at width d: [n, 2 d], the blocks y, x, w, h
     * of d / 2 channels each.
     */
    static float[] boxes(float[] boxes, int n, int d) {
        int half = d / 2;
        float[] out = new float[n * 2 * d];
        for (int i = 0; i < n; i++) {
            int o = i * 2 * d;
            encode(boxes[i * 4 + 1], half, out, o);
            encode(boxes[i * 4], half, out, o + half);
            encode(boxes[i * 4 + 2], half, out, o + 2 * half);
            encode(boxes[i * 4 + 3], half, out, o + 3 * half);
        }
        return out;
    }
}
