package io.samstream.gpu.sam2;

import io.samstream.gpu.mask.MaskSummary;

/**
 * The resamplings of SAM 2 on channels-last maps [h, w, c], each as torch computes it: bicubic
 * ({@code F.interpolate(mode="bicubic")}, A = -0.75, align_corners=False, edge taps clamped), bilinear
 * (align_corners=False, no antialias), nearest 2x, and 2x2 max pooling.
 */
public final class Resampling {
    private Resampling() {}

    private static final float A = -0.75f;

    /** Bicubic resize of x [h, w, c] to [oh, ow, c]. */
    static float[] bicubic(float[] x, int h, int w, int c, int oh, int ow) {
        float sy = (float) h / oh;
        float sx = (float) w / ow;
        float[] out = new float[oh * ow * c];
        float[] rows = new float[4];
        for (int oy = 0; oy < oh; oy++) {
            float ry = sy * (oy + 0.5f) - 0.5f;
            int iy = (int) Math.floor(ry);
            float[] wy = cubicWeights(ry - iy);
            for (int ox = 0; ox < ow; ox++) {
                float rx = sx * (ox + 0.5f) - 0.5f;
                int ix = (int) Math.floor(rx);
                float[] wx = cubicWeights(rx - ix);
                for (int ch = 0; ch < c; ch++) {
                    for (int j = 0; j < 4; j++) {
                        int yy = clamp(iy - 1 + j, h);
                        float acc = 0f;
                        for (int i = 0; i < 4; i++) {
                            acc += x[(yy * w + clamp(ix - 1 + i, w)) * c + ch] * wx[i];
                        }
                        rows[j] = acc;
                    }
                    out[(oy * ow + ox) * c + ch] = rows[0] * wy[0] + rows[1] * wy[1] + rows[2] * wy[2] + rows[3] * wy[3];
                }
            }
        }
        return out;
    }

    private static float[] cubicWeights(float t) {
        return new float[] {cubic2(t + 1f), cubic1(t), cubic1(1f - t), cubic2(2f - t)};
    }

    private static float cubic1(float x) {
        return ((A + 2) * x - (A + 3)) * x * x + 1;
    }

    private static float cubic2(float x) {
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    }

    private static int clamp(int i, int n) {
        return Math.min(Math.max(i, 0), n - 1);
    }

    /** Bilinear resize of a single-channel map x [h, w] to [oh, ow]. */
    public static float[] bilinear(float[] x, int h, int w, int oh, int ow) {
        LinearTaps rows = LinearTaps.of(h, oh);
        LinearTaps cols = LinearTaps.of(w, ow);
        int[] x0 = cols.lo();
        int[] x1 = cols.hi();
        float[] lx = cols.weight();
        float[] out = new float[oh * ow];
        for (int oy = 0; oy < oh; oy++) {
            int y0 = rows.lo()[oy];
            int y1 = rows.hi()[oy];
            float ly = rows.weight()[oy];
            float hy = 1f - ly;
            for (int ox = 0; ox < ow; ox++) {
                float l = lx[ox];
                float hx = 1f - l;
                out[oy * ow + ox] = hy * (hx * x[y0 * w + x0[ox]] + l * x[y0 * w + x1[ox]])
                        + ly * (hx * x[y1 * w + x0[ox]] + l * x[y1 * w + x1[ox]]);
            }
        }
        return out;
    }

    /**
     * {@code MaskSummary.of(bilinear(x, h, w, oh, ow), oh, ow)} without the [oh, ow] map: the same float operations in
     * the same order, so the same bits and counts, made column by column in the summary's column-major order
     * ({@link MaskSummary.Columns}). Each output column first blends its two source columns ({@code hx * a + l * b},
     * as {@link #bilinear}), then each row of it blends two of those; nothing is read with a row's stride, and nothing
     * of the frame's size is allocated but the bits. Rows that blend the same two values far from every threshold
     * are counted as a run without blending each ({@link MaskSummary.Columns#addBlended}), and a column whose two
     * source columns are far from every threshold as a whole: the same bits and counts, at a fraction of the work
     * for an object that covers a small part of the frame.
     */
    public static MaskSummary bilinearSummary(float[] x, int h, int w, int oh, int ow) {
        LinearTaps rows = LinearTaps.of(h, oh);
        LinearTaps cols = LinearTaps.of(w, ow);
        int[] y0 = rows.lo();
        int[] y1 = rows.hi();
        float[] ly = rows.weight();
        float[] hy = new float[oh];
        for (int oy = 0; oy < oh; oy++) {
            hy[oy] = 1f - ly[oy];
        }
        // The output rows in runs that blend the same two source rows (about oh / h rows each when upscaling).
        int runs = 0;
        int[] from = new int[oh + 1];
        int[] lo = new int[oh];
        int[] hi = new int[oh];
        for (int oy = 0; oy < oh; oy++) {
            if (oy == 0 || y0[oy] != lo[runs - 1] || y1[oy] != hi[runs - 1]) {
                from[runs] = oy;
                lo[runs] = y0[oy];
                hi[runs] = y1[oy];
                runs++;
            }
        }
        from[runs] = oh;
        from = java.util.Arrays.copyOf(from, runs + 1);
        // Each source column's extremes: an output column blends two source columns, so its values lie between
        // theirs (widened by two blends' rounding); one that lies on one side of every threshold is not blended.
        float[] colMin = new float[w];
        float[] colMax = new float[w];
        for (int j = 0; j < w; j++) {
            float mn = x[j];
            float mx = x[j];
            for (int i = 1; i < h; i++) {
                mn = Math.min(mn, x[i * w + j]);
                mx = Math.max(mx, x[i * w + j]);
            }
            colMin[j] = mn;
            colMax[j] = mx;
        }
        float[] column = new float[h];
        MaskSummary.Columns summary = new MaskSummary.Columns(oh, ow);
        for (int ox = 0; ox < ow; ox++) {
            int a = cols.lo()[ox];
            int b = cols.hi()[ox];
            float mn = Math.min(colMin[a], colMin[b]);
            float mx = Math.max(colMax[a], colMax[b]);
            float margin = 1e-6f * Math.max(Math.abs(mn), Math.abs(mx)) + 1e-30f;
            if (MaskSummary.Columns.uniform(mn - margin, mx + margin)) {
                summary.addUniform(mn - margin);
                continue;
            }
            float l = cols.weight()[ox];
            float hx = 1f - l;
            for (int i = 0; i < h; i++) {
                column[i] = hx * x[i * w + a] + l * x[i * w + b];
            }
            summary.addBlended(column, from, lo, hi, hy, ly);
        }
        return summary.summary();
    }

    /**
     * The taps of a plain bilinear resize (align_corners=False, no antialias) along one axis of {@code in} samples to
     * {@code out}, as torch computes them: per output index o, the source coordinate max((in / out)(o + 0.5) - 0.5, 0)
     * in float, its floor clamped to in - 1 ({@code lo}), the next sample or lo again at the edge ({@code hi}), and
     * hi's weight, the fraction clamped to [0, 1] ({@code weight}; lo's is 1 - weight).
     */
    public record LinearTaps(int[] lo, int[] hi, float[] weight) {
        public static LinearTaps of(int in, int out) {
            float scale = (float) in / out;
            int[] lo = new int[out];
            int[] hi = new int[out];
            float[] weight = new float[out];
            for (int o = 0; o < out; o++) {
                float r = Math.max(scale * (o + 0.5f) - 0.5f, 0f);
                int i = Math.min((int) Math.floor(r), in - 1);
                lo[o] = i;
                hi[o] = i < in - 1 ? i + 1 : i;
                weight[o] = Math.min(Math.max(r - i, 0f), 1f);
            }
            return new LinearTaps(lo, hi, weight);
        }
    }

    /** Nearest-neighbour 2x upsampling of x [h, w, c]. */
    public static float[] nearest2x(float[] x, int h, int w, int c) {
        float[] out = new float[4 * h * w * c];
        for (int oy = 0; oy < 2 * h; oy++) {
            for (int ox = 0; ox < 2 * w; ox++) {
                System.arraycopy(x, ((oy / 2) * w + ox / 2) * c, out, (oy * 2 * w + ox) * c, c);
            }
        }
        return out;
    }

    /** 2x2 max pooling, stride 2, floor of odd sides, of x [h, w, c]. */
    static float[] maxPool2x2(float[] x, int h, int w, int c) {
        int oh = h / 2;
        int ow = w / 2;
        float[] out = new float[oh * ow * c];
        for (int oy = 0; oy < oh; oy++) {
            for (int ox = 0; ox < ow; ox++) {
                int a = ((2 * oy) * w + 2 * ox) * c;
                int b = a + c;
                int d = a + w * c;
                int e = d + c;
                int o = (oy * ow + ox) * c;
                for (int ch = 0; ch < c; ch++) {
                    out[o + ch] = Math.max(Math.max(x[a + ch], x[b + ch]), Math.max(x[d + ch], x[e + ch]));
                }
            }
        }
        return out;
    }
}
