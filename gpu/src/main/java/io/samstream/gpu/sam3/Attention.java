package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.Gemm;
import io.samstream.gpu.cpu.Linear;
import io.samstream.gpu.cpu.PackedMatrix;
import io.samstream.gpu.sam2.Sdpa;
import java.util.Arrays;

/**
 * torch's {@code nn.MultiheadAttention} as SAM 3 uses it (no dropout, no extra key/value biases): the packed
 * {@code in_proj_weight} split into query, key and value projections, softmax(q·kᵀ / sqrt(head width) + bias)·v
 * per head, then {@code out_proj}. A mask may be an additive bias per head ({@code [heads, nq, nk]}, the box
 * relative position bias), causal (the text encoder's), or key padding (true = the key is padding and ignored),
 * as torch merges them.
 *
 * <p>For few queries over many keys (the geometry encoder's class token over the image tokens) the key and value
 * projections are folded into the queries instead of applied to every key (see {@link #folds}).
 */
final class Attention {
    /** Keys per task of the folded path's weighted sum (fixed, so results do not depend on the thread count). */
    private static final int KEY_BLOCK = 256;

    private final Linear q;
    private final Linear k;
    private final Linear v;
    private final Linear out;
    /** The key and value weights [dim (out), dim (in)] and the value bias, for the folded path. */
    private final float[] wk;
    private final float[] wv;
    private final float[] bv;
    private final int dim;
    private final int heads;

    private Attention(Linear q, Linear k, Linear v, Linear out, float[] wk, float[] wv, float[] bv, int dim,
            int heads) {
        this.q = q;
        this.k = k;
        this.v = v;
        this.out = out;
        this.wk = wk;
        this.wv = wv;
        this.bv = bv;
        this.dim = dim;
        this.heads = heads;
    }

    /** Loads {@code p.in_proj_weight} [3 dim, dim], {@code p.in_proj_bias}, {@code p.out_proj}. */
    static Attention load(StateDict sd, String p, int dim, int heads) {
        if (dim % heads != 0) {
            throw new IllegalArgumentException(p + ": width " + dim + " is not a multiple of " + heads + " heads");
        }
        float[] w = sd.get(p + ".in_proj_weight", 3 * dim, dim).data();
        float[] b = sd.get(p + ".in_proj_bias", 3 * dim).data();
        Linear[] proj = new Linear[3];
        float[][] ws = new float[3][];
        float[][] bs = new float[3][];
        for (int i = 0; i < 3; i++) {
            ws[i] = Arrays.copyOfRange(w, i * dim * dim, (i + 1) * dim * dim);
            bs[i] = Arrays.copyOfRange(b, i * dim, (i + 1) * dim);
            proj[i] = new Linear(PackedMatrix.fromOutIn(ws[i], dim, dim), bs[i]);
        }
        return new Attention(proj[0], proj[1], proj[2], Linear.load(sd, p + ".out_proj", dim, dim), ws[1], ws[2],
                bs[2], dim, heads);
    }

    /** Attention of nq query rows over nk key/value rows, without a mask. */
    float[] forward(CpuThreadPool pool, float[] query, int nq, float[] key, float[] value, int nk) {
        return forward(pool, query, nq, key, value, nk, null, false, null);
    }

    /**
     * @param bias       additive bias [heads, nq, nk], or null
     * @param causal     whether query i may only see keys 0..i
     * @param keyPadding per key, true when it is padding (masked), or null
     */
    float[] forward(CpuThreadPool pool, float[] query, int nq, float[] key, float[] value, int nk, float[] bias,
            boolean causal, boolean[] keyPadding) {
        return folds(nq, nk, dim, heads)
                ? folded(pool, query, nq, key, value, nk, bias, causal, keyPadding)
                : projected(pool, query, nq, key, value, nk, bias, causal, keyPadding);
    }

    /**
     * Whether the folded path is taken: where its multiply-adds, 2·nq·heads·nk·dim (scores and weighted sums over
     * the raw keys and values) + 2·nq·dim² (folding the queries, unfolding the sums), are fewer than the projected
     * path's, 2·nk·dim² (projecting keys and values) + 2·nq·nk·dim. For many keys that is nq·(heads - 1) < dim
     * (the geometry encoder's class token and a few boxes over the image tokens); self-attention never folds.
     * Both paths ran at about the same rate per multiply-add (width 256, 8 heads, 5184 keys, 1 to 48 queries).
     */
    static boolean folds(int nq, int nk, int dim, int heads) {
        long folded = 2L * nq * heads * nk * dim + 2L * nq * dim * dim;
        long projected = 2L * nk * dim * dim + 2L * nq * nk * dim;
        return folded < projected;
    }

    /** {@link #forward} with every key and value projected. */
    float[] projected(CpuThreadPool pool, float[] query, int nq, float[] key, float[] value, int nk, float[] bias,
            boolean causal, boolean[] keyPadding) {
        float[] qp = q.forward(pool, query, nq);
        float[] kp = k.forward(pool, key, nk);
        float[] vp = v.forward(pool, value, nk);
        int d = dim / heads;
        float[] o = bias == null && !causal && keyPadding == null
                ? Sdpa.attend(pool, qp, kp, vp, 1, nq, nk, heads, d)
                : masked(pool, qp, kp, vp, nq, nk, heads, d, bias, causal, keyPadding);
        return out.forward(pool, o, nq);
    }

    /**
     * {@link #forward} with the key and value projections folded into the queries (exact up to rounding). Per
     * query i and head h (row j = i·heads + h): the score of key t is (W_k,hᵀ q_h)·key_t · scale, leaving out
     * q_h·b_k,h, which is the same for every t and so does not change the softmax; the output is
     * W_v,h (Σ_t p_t value_t) + b_v,h, as the p_t sum to 1 (masked keys get p = 0, as in the projected path).
     * Bias, causal and padding masks act on the scores only, and keys get no other transform (no RoPE here), so
     * every option folds.
     */
    float[] folded(CpuThreadPool pool, float[] query, int nq, float[] key, float[] value, int nk, float[] bias,
            boolean causal, boolean[] keyPadding) {
        float[] qp = q.forward(pool, query, nq);
        int d = dim / heads;
        int rows = nq * heads;
        float scale = (float) (1.0 / Math.sqrt(d));
        // fq[j] = W_k,hᵀ q_h: the query brought back to the keys' input space
        float[] fq = new float[rows * dim];
        for (int j = 0; j < rows; j++) {
            int i = j / heads;
            int h = j % heads;
            int fo = j * dim;
            for (int e = 0; e < d; e++) {
                float qe = qp[i * dim + h * d + e];
                int wo = (h * d + e) * dim;
                for (int c = 0; c < dim; c++) {
                    fq[fo + c] += qe * wk[wo + c];
                }
            }
        }
        float[] raw = new float[nk * rows];
        Gemm.multiply(pool, key, nk, PackedMatrix.fromOutIn(fq, rows, dim), null, raw);
        // p[j, t]: scaled, masked and normalized as in masked()
        float[] p = new float[rows * nk];
        pool.forEach(rows, j -> {
            int i = j / heads;
            int h = j % heads;
            int po = j * nk;
            for (int t = 0; t < nk; t++) {
                if ((causal && t > i) || (keyPadding != null && keyPadding[t])) {
                    p[po + t] = Float.NEGATIVE_INFINITY;
                } else {
                    p[po + t] = raw[t * rows + j] * scale + (bias == null ? 0f : bias[(h * nq + i) * nk + t]);
                }
            }
            CpuOps.softmax(p, po, nk);
        });
        // sums[j] = Σ_t p[j, t] value_t, as partial sums over fixed blocks of keys added in order
        int blocks = (nk + KEY_BLOCK - 1) / KEY_BLOCK;
        float[][][] partial = new float[blocks][][];
        pool.forEach(blocks, b -> {
            float[][] acc = new float[rows][dim];
            float[] row = new float[dim];
            int t1 = Math.min(nk, (b + 1) * KEY_BLOCK);
            for (int t = b * KEY_BLOCK; t < t1; t++) {
                System.arraycopy(value, t * dim, row, 0, dim);
                for (int j = 0; j < rows; j++) {
                    float pj = p[j * nk + t];
                    if (pj == 0f) {
                        continue;
                    }
                    float[] a = acc[j];
                    for (int c = 0; c < dim; c++) {
                        a[c] += pj * row[c];
                    }
                }
            }
            partial[b] = acc;
        });
        // out_h[i] = W_v,h sums[j] + b_v,h
        float[] o = new float[nq * dim];
        float[] sum = new float[dim];
        for (int j = 0; j < rows; j++) {
            int i = j / heads;
            int h = j % heads;
            Arrays.fill(sum, 0f);
            for (float[][] acc : partial) {
                float[] a = acc[j];
                for (int c = 0; c < dim; c++) {
                    sum[c] += a[c];
                }
            }
            for (int e = 0; e < d; e++) {
                int r = h * d + e;
                int wo = r * dim;
                float dot = 0f;
                for (int c = 0; c < dim; c++) {
                    dot += wv[wo + c] * sum[c];
                }
                o[i * dim + r] = dot + bv[r];
            }
        }
        return out.forward(pool, o, nq);
    }

    private static float[] masked(CpuThreadPool pool, float[] q, float[] k, float[] v, int nq, int nk, int heads,
            int d, float[] bias, boolean causal, boolean[] keyPadding) {
        int width = heads * d;
        float[] out = new float[nq * width];
        float scale = (float) (1.0 / Math.sqrt(d));
        pool.forEach(heads * nq, task -> {
            int h = task / nq;
            int i = task % nq;
            float[] s = new float[nk];
            int qo = i * width + h * d;
            for (int t = 0; t < nk; t++) {
                if ((causal && t > i) || (keyPadding != null && keyPadding[t])) {
                    s[t] = Float.NEGATIVE_INFINITY;
                    continue;
                }
                int ko = t * width + h * d;
                float dot = 0f;
                for (int c = 0; c < d; c++) {
                    dot += q[qo + c] * k[ko + c];
                }
                s[t] = dot * scale + (bias == null ? 0f : bias[(h * nq + i) * nk + t]);
            }
            CpuOps.softmax(s, 0, nk);
            for (int t = 0; t < nk; t++) {
                float p = s[t];
                if (p == 0f) {
                    continue;
                }
                int vo = t * width + h * d;
                for (int c = 0; c < d; c++) {
                    out[qo + c] += p * v[vo + c];
                }
            }
        });
        return out;
    }
}
