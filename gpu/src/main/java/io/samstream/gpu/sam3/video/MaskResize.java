package io.samstream.gpu.sam3.video;

import io.samstream.gpu.sam2.Resampling;

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
        return Resampling.bilinear(x, h, w, oh, ow);
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
