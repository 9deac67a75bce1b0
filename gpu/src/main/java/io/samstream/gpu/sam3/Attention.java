package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
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
 */
final class Attention {
    private final Linear q;
    private final Linear k;
    private final Linear v;
    private final Linear out;
    private final int dim;
    private final int heads;

    private Attention(Linear q, Linear k, Linear v, Linear out, int dim, int heads) {
        this.q = q;
        this.k = k;
        this.v = v;
        this.out = out;
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
        for (int i = 0; i < 3; i++) {
            proj[i] = new Linear(PackedMatrix.fromOutIn(Arrays.copyOfRange(w, i * dim * dim, (i + 1) * dim * dim),
                    dim, dim), Arrays.copyOfRange(b, i * dim, (i + 1) * dim));
        }
        return new Attention(proj[0], proj[1], proj[2], Linear.load(sd, p + ".out_proj", dim, dim), dim, heads);
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
        float[] qp = q.forward(pool, query, nq);
        float[] kp = k.forward(pool, key, nk);
        float[] vp = v.forward(pool, value, nk);
        int d = dim / heads;
        float[] o = bias == null && !causal && keyPadding == null
                ? Sdpa.attend(pool, qp, kp, vp, 1, nq, nk, heads, d)
                : masked(pool, qp, kp, vp, nq, nk, heads, d, bias, causal, keyPadding);
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
