package io.samstream.gpu.cpu;

/** Straightforward double-precision versions of the kernels, written for clarity, to test against. */
final class NaiveOps {
    private NaiveOps() {}

    /** y[m][n] = sum_k a[m][k] * w[n][k] + bias[n], w in torch Linear layout [out, in]. */
    static float[] linear(float[] a, int m, int k, float[] w, float[] bias, int n) {
        float[] y = new float[m * n];
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                double acc = bias == null ? 0 : bias[j];
                for (int t = 0; t < k; t++) {
                    acc += (double) a[i * k + t] * w[j * k + t];
                }
                y[i * n + j] = (float) acc;
            }
        }
        return y;
    }

    /** torch Conv2d on channels-first x [c, h, w] with weight [o, c, k, k]; returns [o, ho, wo]. */
    static float[] conv2d(float[] x, int c, int h, int w, float[] weight, float[] bias, int o, int k, int stride,
            int pad) {
        int ho = (h + 2 * pad - k) / stride + 1;
        int wo = (w + 2 * pad - k) / stride + 1;
        float[] y = new float[o * ho * wo];
        for (int oc = 0; oc < o; oc++) {
            for (int oy = 0; oy < ho; oy++) {
                for (int ox = 0; ox < wo; ox++) {
                    double acc = bias == null ? 0 : bias[oc];
                    for (int ic = 0; ic < c; ic++) {
                        for (int ky = 0; ky < k; ky++) {
                            for (int kx = 0; kx < k; kx++) {
                                int iy = oy * stride + ky - pad;
                                int ix = ox * stride + kx - pad;
                                if (iy >= 0 && iy < h && ix >= 0 && ix < w) {
                                    acc += (double) x[(ic * h + iy) * w + ix]
                                            * weight[((oc * c + ic) * k + ky) * k + kx];
                                }
                            }
                        }
                    }
                    y[(oc * ho + oy) * wo + ox] = (float) acc;
                }
            }
        }
        return y;
    }

    /** torch ConvTranspose2d(k=2, s=2) on channels-first x [c, h, w], weight [c, o, 2, 2]; returns [o, 2h, 2w]. */
    static float[] convTranspose2x2(float[] x, int c, int h, int w, float[] weight, float[] bias, int o) {
        int ho = 2 * h;
        int wo = 2 * w;
        double[] acc = new double[o * ho * wo];
        for (int oc = 0; oc < o; oc++) {
            for (int i = 0; i < ho * wo; i++) {
                acc[oc * ho * wo + i] = bias[oc];
            }
        }
        // Scatter form: each input pixel spreads over the output pixels its kernel covers.
        for (int ic = 0; ic < c; ic++) {
            for (int iy = 0; iy < h; iy++) {
                for (int ix = 0; ix < w; ix++) {
                    for (int oc = 0; oc < o; oc++) {
                        for (int ky = 0; ky < 2; ky++) {
                            for (int kx = 0; kx < 2; kx++) {
                                int oy = iy * 2 + ky;
                                int ox = ix * 2 + kx;
                                acc[(oc * ho + oy) * wo + ox] += (double) x[(ic * h + iy) * w + ix]
                                        * weight[((ic * o + oc) * 2 + ky) * 2 + kx];
                            }
                        }
                    }
                }
            }
        }
        float[] y = new float[acc.length];
        for (int i = 0; i < y.length; i++) {
            y[i] = (float) acc[i];
        }
        return y;
    }

    /** SAM's LayerNorm2d on channels-first x [c, h*w]: normalize each pixel over channels. */
    static float[] layerNorm2d(float[] x, int c, int hw, float[] weight, float[] bias, double eps) {
        float[] y = new float[x.length];
        for (int p = 0; p < hw; p++) {
            double u = 0;
            for (int ch = 0; ch < c; ch++) {
                u += x[ch * hw + p];
            }
            u /= c;
            double s = 0;
            for (int ch = 0; ch < c; ch++) {
                double d = x[ch * hw + p] - u;
                s += d * d;
            }
            s /= c;
            for (int ch = 0; ch < c; ch++) {
                y[ch * hw + p] = (float) (weight[ch] * ((x[ch * hw + p] - u) / Math.sqrt(s + eps)) + bias[ch]);
            }
        }
        return y;
    }

    static float[] gelu(float[] x) {
        float[] y = new float[x.length];
        for (int i = 0; i < x.length; i++) {
            y[i] = (float) (0.5 * x[i] * (1 + Erf.erf(x[i] / Math.sqrt(2))));
        }
        return y;
    }

    static float[] channelsLast(float[] x, int c, int hw) {
        float[] y = new float[x.length];
        for (int ch = 0; ch < c; ch++) {
            for (int p = 0; p < hw; p++) {
                y[p * c + ch] = x[ch * hw + p];
            }
        }
        return y;
    }

    static float[] channelsFirst(float[] x, int c, int hw) {
        float[] y = new float[x.length];
        for (int ch = 0; ch < c; ch++) {
            for (int p = 0; p < hw; p++) {
                y[ch * hw + p] = x[p * c + ch];
            }
        }
        return y;
    }

    static void softmax(double[] x) {
        double max = Double.NEGATIVE_INFINITY;
        for (double v : x) {
            max = Math.max(max, v);
        }
        double sum = 0;
        for (int i = 0; i < x.length; i++) {
            x[i] = Math.exp(x[i] - max);
            sum += x[i];
        }
        for (int i = 0; i < x.length; i++) {
            x[i] /= sum;
        }
    }

    static double maxAbsDiff(float[] a, float[] b) {
        if (a.length != b.length) {
            throw new AssertionError("lengths differ: " + a.length + " vs " + b.length);
        }
        double m = 0;
        for (int i = 0; i < a.length; i++) {
            m = Math.max(m, Math.abs((double) a[i] - b[i]));
        }
        return m;
    }
}
