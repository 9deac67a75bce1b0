package io.samstream.gpu.cuda.kernels;

import java.util.stream.IntStream;
import io.samstream.gpu.cuda.Bf16;

/**
 * Plain fp32/fp64 reference implementations of what the kernels compute, written for obviousness:
 * naive loops over the definitions in Meta's image_encoder.py. Accumulation in double; results in float.
 */
final class ReferenceOps {
    private ReferenceOps() {}

    static double gelu(double x) {
        return 0.5 * x * (1 + erf(x / Math.sqrt(2)));
    }

    /** erf to ~1e-15 (Abramowitz-Stegun 7.1.26 is too coarse for a reference): series / continued fraction. */
    static double erf(double x) {
        double ax = Math.abs(x);
        double r;
        if (ax < 2.5) {
            // Maclaurin series: erf(x) = 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1))
            double term = ax, sum = ax, x2 = ax * ax;
            for (int n = 1; n < 60; n++) {
                term *= -x2 / n;
                sum += term / (2 * n + 1);
            }
            r = 2 / Math.sqrt(Math.PI) * sum;
        } else {
            // erfc continued fraction (Lentz), converges fast for x >= 2.5
            double tiny = 1e-300, f = ax, c = ax, d = 0;
            for (int n = 1; n < 200; n++) {
                double an = n / 2.0;
                d = ax + an * d;
                d = Math.abs(d) < tiny ? tiny : d;
                c = ax + an / c;
                c = Math.abs(c) < tiny ? tiny : c;
                d = 1 / d;
                double delta = c * d;
                f *= delta;
                if (Math.abs(delta - 1) < 1e-16) {
                    break;
                }
            }
            r = 1 - Math.exp(-ax * ax) / Math.sqrt(Math.PI) / f;
        }
        return x < 0 ? -r : r;
    }

    /** c[m,n] = a[m,k] w[n,k]^T (+bias) (gelu) (+residual) for the rows in {@code rows}. */
    static float[] gemmRows(float[] a, float[] w, float[] bias, float[] residual, int[] rows, int n, int k,
                            boolean gelu) {
        float[] c = new float[rows.length * n];
        IntStream.range(0, rows.length).parallel().forEach(ri -> {
            int row = rows[ri];
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int p = 0; p < k; p++) {
                    s += (double) a[row * k + p] * w[j * k + p];
                }
                if (bias != null) {
                    s += bias[j];
                }
                if (gelu) {
                    s = gelu(s);
                }
                if (residual != null) {
                    s += residual[row * n + j];
                }
                c[ri * n + j] = (float) s;
            }
        });
        return c;
    }

    static int[] allRows(int m) {
        return IntStream.range(0, m).toArray();
    }

    /** LayerNorm over the last dim of x (+ residual, rounded to bf16 first as the kernel stores it). */
    static float[] layerNorm(float[] x, float[] residual, float[] gamma, float[] beta, int rows, int c, double eps) {
        float[] y = new float[rows * c];
        for (int r = 0; r < rows; r++) {
            double[] s = new double[c];
            double mean = 0;
            for (int i = 0; i < c; i++) {
                s[i] = residual == null ? x[r * c + i] : Bf16.round(x[r * c + i] + residual[r * c + i]);
                mean += s[i];
            }
            mean /= c;
            double var = 0;
            for (int i = 0; i < c; i++) {
                var += (s[i] - mean) * (s[i] - mean);
            }
            var /= c;
            double rstd = 1 / Math.sqrt(var + eps);
            for (int i = 0; i < c; i++) {
                y[r * c + i] = (float) ((s[i] - mean) * rstd * gamma[i] + beta[i]);
            }
        }
        return y;
    }

    /**
     * SAM's encoder attention, as image_encoder.py computes it, for one image of a batch.
     *
     * <p>Windowed ({@code window > 0}): the token grid is zero-padded to a multiple of the window
     * <em>before</em> the qkv Linear, so padded tokens' q, k, v are the Linear's bias ({@code qkvBias}, or
     * zeros when null); each window attends within itself; outputs of padded tokens are dropped.
     * Global: one sequence of all h*w tokens. Scores: {@code scale * q.k + <q, Rh[qh-kh+S-1]> + <q, Rw[qw-kw+S-1]>}
     * with the unscaled q.
     *
     * @param qkv  {@code [h*w, 3*heads*hd]} of one image
     * @param only when not null, compute only these (token, head) pairs: {@code only[i] = token * heads + head}
     * @return {@code [h*w, heads*hd]}; entries not computed are NaN
     */
    static float[] attention(float[] qkv, float[] qkvBias, float[] relH, float[] relW, int h, int w, int heads, int hd,
                             int window, int[] only) {
        int cTotal = heads * hd;
        float[] out = new float[h * w * cTotal];
        java.util.Arrays.fill(out, Float.NaN);
        int seqH = window > 0 ? window : h, seqW = window > 0 ? window : w;
        double scale = 1 / Math.sqrt(hd);

        // Element d of q / k / v (which = 0 / 1 / 2) of a head at padded-grid position (y, x): the qkv
        // row of a real token, the bias (Linear of the zero padding) outside the grid.
        record Tok(float[] qkv, float[] bias, int w, int cTotal, int h) {
            double get(int y, int x, int which, int head, int hd, int d) {
                int col = which * cTotal + head * hd + d;
                if (y < h && x < w) {
                    return qkv[(y * w + x) * 3 * cTotal + col];
                }
                return bias == null ? 0 : bias[col];
            }
        }
        Tok tok = new Tok(qkv, qkvBias, w, cTotal, h);

        int[] work = only != null ? only : IntStream.range(0, h * w * heads).toArray();
        IntStream.range(0, work.length).parallel().forEach(wi -> {
            int token = work[wi] / heads, head = work[wi] % heads;
            int ty = token / w, tx = token % w;
            int oy = window > 0 ? ty / window * window : 0, ox = window > 0 ? tx / window * window : 0;
            int qh = ty - oy, qw = tx - ox;
            double[] q = new double[hd];
            for (int d = 0; d < hd; d++) {
                q[d] = tok.get(ty, tx, 0, head, hd, d);
            }
            double[] relh = new double[seqH], relw = new double[seqW];
            for (int j = 0; j < seqH; j++) {
                for (int d = 0; d < hd; d++) {
                    relh[j] += q[d] * relH[(qh - j + seqH - 1) * hd + d];
                }
            }
            for (int j = 0; j < seqW; j++) {
                for (int d = 0; d < hd; d++) {
                    relw[j] += q[d] * relW[(qw - j + seqW - 1) * hd + d];
                }
            }
            int n = seqH * seqW;
            double[] s = new double[n];
            double max = Double.NEGATIVE_INFINITY;
            for (int kh = 0; kh < seqH; kh++) {
                for (int kw = 0; kw < seqW; kw++) {
                    double dot = 0;
                    for (int d = 0; d < hd; d++) {
                        dot += q[d] * tok.get(oy + kh, ox + kw, 1, head, hd, d);
                    }
                    double v = dot * scale + relh[kh] + relw[kw];
                    s[kh * seqW + kw] = v;
                    max = Math.max(max, v);
                }
            }
            double sum = 0;
            for (int i = 0; i < n; i++) {
                s[i] = Math.exp(s[i] - max);
                sum += s[i];
            }
            for (int d = 0; d < hd; d++) {
                double o = 0;
                for (int kh = 0; kh < seqH; kh++) {
                    for (int kw = 0; kw < seqW; kw++) {
                        o += s[kh * seqW + kw] * tok.get(oy + kh, ox + kw, 2, head, hd, d);
                    }
                }
                out[token * cTotal + head * hd + d] = (float) (o / sum);
            }
        });
        return out;
    }
}
