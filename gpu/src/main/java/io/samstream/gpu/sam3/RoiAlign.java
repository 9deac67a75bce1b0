package io.samstream.gpu.sam3;

/**
 * torchvision's {@code roi_align(aligned=False, sampling_ratio=-1, spatial_scale=1)} of one box over a
 * channels-last map: the box (at least 1 x 1) is cut into out x out bins, each the average of ceil(box side / out)
 * x ceil(...) bilinear samples at the sub-bin centres; samples more than one pixel outside the map are 0, others
 * are clamped to its edge.
 */
final class RoiAlign {
    private RoiAlign() {}

    /** [out, out, c] pooled from map [h, w, c] over the box (x0, y0, x1, y1) in map pixels. */
    static float[] pool(float[] map, int h, int w, int c, float x0, float y0, float x1, float y1, int out) {
        float roiW = Math.max(x1 - x0, 1f);
        float roiH = Math.max(y1 - y0, 1f);
        float binH = roiH / out;
        float binW = roiW / out;
        int gridH = (int) Math.ceil(roiH / out);
        int gridW = (int) Math.ceil(roiW / out);
        float count = Math.max(gridH * gridW, 1);
        float[] result = new float[out * out * c];
        float[] acc = new float[c];
        for (int ph = 0; ph < out; ph++) {
            for (int pw = 0; pw < out; pw++) {
                java.util.Arrays.fill(acc, 0f);
                for (int iy = 0; iy < gridH; iy++) {
                    float y = y0 + ph * binH + (iy + 0.5f) * binH / gridH;
                    for (int ix = 0; ix < gridW; ix++) {
                        float x = x0 + pw * binW + (ix + 0.5f) * binW / gridW;
                        sample(map, h, w, c, y, x, acc);
                    }
                }
                int o = (ph * out + pw) * c;
                for (int ch = 0; ch < c; ch++) {
                    result[o + ch] = acc[ch] / count;
                }
            }
        }
        return result;
    }

    private static void sample(float[] map, int h, int w, int c, float y, float x, float[] acc) {
        if (y < -1f || y > h || x < -1f || x > w) {
            return;
        }
        y = Math.max(y, 0f);
        x = Math.max(x, 0f);
        int yl = (int) y;
        int xl = (int) x;
        int yh;
        int xh;
        if (yl >= h - 1) {
            yh = yl = h - 1;
            y = yl;
        } else {
            yh = yl + 1;
        }
        if (xl >= w - 1) {
            xh = xl = w - 1;
            x = xl;
        } else {
            xh = xl + 1;
        }
        float ly = y - yl;
        float lx = x - xl;
        float hy = 1f - ly;
        float hx = 1f - lx;
        float w1 = hy * hx;
        float w2 = hy * lx;
        float w3 = ly * hx;
        float w4 = ly * lx;
        int a = (yl * w + xl) * c;
        int b = (yl * w + xh) * c;
        int e = (yh * w + xl) * c;
        int f = (yh * w + xh) * c;
        for (int ch = 0; ch < c; ch++) {
            acc[ch] += w1 * map[a + ch] + w2 * map[b + ch] + w3 * map[e + ch] + w4 * map[f + ch];
        }
    }
}
