package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.Linear;

/**
 * {@code RoPEAttention}: q, k, v projections (k and v from {@code kvDim}), the 2-D rotary encoding applied to
 * the queries and to all keys but the last {@code excluded} (the object pointers), attention per head, output
 * projection.
 */
final class RopeAttention {
    private final Linear qProj;
    private final Linear kProj;
    private final Linear vProj;
    private final Linear outProj;
    private final int heads;
    private final int dim;
    private final RotaryEncoding rope;

    RopeAttention(StateDict sd, String p, int dim, int kvDim, int heads, RotaryEncoding rope) {
        this.qProj = Linear.load(sd, p + "q_proj", dim, dim);
        this.kProj = Linear.load(sd, p + "k_proj", kvDim, dim);
        this.vProj = Linear.load(sd, p + "v_proj", kvDim, dim);
        this.outProj = Linear.load(sd, p + "out_proj", dim, dim);
        this.heads = heads;
        this.dim = dim;
        this.rope = rope;
    }

    float[] forward(CpuThreadPool pool, float[] q, int nq, float[] k, float[] v, int nk, int excluded) {
        float[] qp = qProj.forward(pool, q, nq);
        float[] kp = kProj.forward(pool, k, nk);
        float[] vp = vProj.forward(pool, v, nk);
        if (nq != rope.tokens()) {
            throw new IllegalArgumentException(nq + " queries for a rotary map of " + rope.tokens());
        }
        rope.apply(qp, nq, heads);
        rope.apply(kp, nk - excluded, heads);
        float[] out = Sdpa.attend(pool, qp, kp, vp, 1, nq, nk, heads, dim / heads);
        return outProj.forward(pool, out, nq);
    }
}
