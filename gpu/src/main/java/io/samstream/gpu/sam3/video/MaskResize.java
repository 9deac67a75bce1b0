package io.samstream.gpu.sam3.video;

import io.samstream.gpu.sam2.Resampling.LinearTaps;

/**
 * Resizing of single-channel float maps as torch's {@code F.interpolate(mode="bilinear", align_corners=False)}
 * computes it: {@link #bilinear} without antialiasing, {@link #antialiased} with it ({@code antialias=True}: a
 * triangle filter widened by the downscale factor, weights normalized per output pixel, applied along the width
 * then the height). When enlarging, the antialiased filter keeps the width of one input pixel and gives what the
 * plain one gives.
 */
final class MaskResize {
    private MaskResize() {}

    /** x [h, w] to [oh, ow], no antialiasing. */
    static float[] bilinear(float[] x, int h, int w, int oh, int ow) {
        float[] out = new float[oh * ow];
        new Bilinear(h, w, oh, ow).rows(x, 0, oh, out, 0);
        return out;
    }

    /**
     * A plain bilinear resize [h, w] to [oh, ow] that writes any range of output rows, so that callers can split one
     * resize across threads or take it a band at a time. Its values are those of {@code Resampling.bilinear}, bit for
     * bit (the same {@link LinearTaps}): out = hy (hx a + lx b) + ly (hx c + lx d), where each input row's horizontal
     * interpolations (the brackets) are computed once for all the output rows that read them.
     */
    static final class Bilinear {
        private final int w;
        private final int ow;
        private final LinearTaps xTaps;
        private final LinearTaps yTaps;
        /** 1 - xTaps.weight(), the lower column's weight. */
        private final float[] hx;

        Bilinear(int h, int w, int oh, int ow) {
            this.w = w;
            this.ow = ow;
            this.xTaps = LinearTaps.of(w, ow);
            this.yTaps = LinearTaps.of(h, oh);
            hx = new float[ow];
            for (int ox = 0; ox < ow; ox++) {
                hx[ox] = 1f - xTaps.weight()[ox];
            }
        }

        /** Output rows [from, to) of x, written to dst from offset {@code at}. */
        void rows(float[] x, int from, int to, float[] dst, int at) {
            Interpolated rows = new Interpolated(x);
            for (int oy = from; oy < to; oy++) {
                float ly = yTaps.weight()[oy];
                float hy = 1f - ly;
                float[] top = rows.get(yTaps.lo()[oy]);
                float[] bottom = rows.get(yTaps.hi()[oy]);
                int o = at + (oy - from) * ow;
                for (int ox = 0; ox < ow; ox++) {
                    dst[o + ox] = hy * top[ox] + ly * bottom[ox];
                }
            }
        }

        /** The last two input rows interpolated along the width; output rows only move down, so the lower goes. */
        private final class Interpolated {
            private final float[] x;
            private final float[][] rows = new float[2][ow];
            private final int[] of = {-1, -1};

            Interpolated(float[] x) {
                this.x = x;
            }

            float[] get(int y) {
                if (of[0] == y) {
                    return rows[0];
                }
                if (of[1] == y) {
                    return rows[1];
                }
                int slot = of[0] < of[1] ? 0 : 1;
                float[] row = rows[slot];
                int a = y * w;
                int[] x0 = xTaps.lo();
                int[] x1 = xTaps.hi();
                float[] lx = xTaps.weight();
                for (int ox = 0; ox < ow; ox++) {
                    row[ox] = hx[ox] * x[a + x0[ox]] + lx[ox] * x[a + x1[ox]];
                }
                of[slot] = y;
                return row;
            }
        }
    }

    /** x [h, w] to [oh, ow], antialiased. */
    static float[] antialiased(float[] x, int h, int w, int oh, int ow) {
        Taps cols = taps(w, ow);
        Taps rows = taps(h, oh);
        float[] mid = new float[h * ow];
        for (int y = 0; y < h; y++) {
            for (int ox = 0; ox < ow; ox++) {
                double acc = 0;
                int start = cols.start[ox];
                for (int j = 0; j < cols.size[ox]; j++) {
                    acc += cols.weights[ox][j] * x[y * w + start + j];
                }
                mid[y * ow + ox] = (float) acc;
            }
        }
        float[] out = new float[oh * ow];
        for (int oy = 0; oy < oh; oy++) {
            int start = rows.start[oy];
            for (int ox = 0; ox < ow; ox++) {
                double acc = 0;
                for (int j = 0; j < rows.size[oy]; j++) {
                    acc += rows.weights[oy][j] * mid[(start + j) * ow + ox];
                }
                out[oy * ow + ox] = (float) acc;
            }
        }
        return out;
    }

    /** Per output index: the first input index, how many inputs, their normalized weights. */
    private record Taps(int[] start, int[] size, double[][] weights) {}

    /** torch's {@code _compute_indices_min_size_weights_aa} for the bilinear (triangle) filter. */
    private static Taps taps(int in, int out) {
        double scale = (double) in / out;
        double support = scale >= 1.0 ? scale : 1.0;
        double invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
        int[] start = new int[out];
        int[] size = new int[out];
        double[][] weights = new double[out][];
        for (int i = 0; i < out; i++) {
            double center = scale * (i + 0.5);
            int xmin = Math.max((int) (center - support + 0.5), 0);
            int xsize = Math.min((int) (center + support + 0.5), in) - xmin;
            double[] w = new double[Math.max(xsize, 0)];
            double total = 0;
            for (int j = 0; j < w.length; j++) {
                double d = Math.abs((j + xmin - center + 0.5) * invscale);
                w[j] = d < 1.0 ? 1.0 - d : 0.0;
                total += w[j];
            }
            if (total != 0) {
                for (int j = 0; j < w.length; j++) {
                    w[j] /= total;
                }
            }
            start[i] = xmin;
            size[i] = w.length;
            weights[i] = w;
        }
        return new Taps(start, size, weights);
    }
}
