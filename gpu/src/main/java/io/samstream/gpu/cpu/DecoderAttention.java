package io.samstream.gpu.cpu;

import io.samstream.gpu.checkpoint.StateDict;

/**
 * The mask decoder's {@code Attention}: q, k, v projected to an internal width (dim / downsample), split
 * into heads, softmax(q·kᵀ / sqrt(head_dim))·v per head, heads recombined and projected back to dim.
 * Note the order of the reference: the dot products are divided by sqrt(head_dim), q is not pre-scaled.
 */
public final class DecoderAttention {
    static final int QUERY_BLOCK = 64;

    private final Linear qProj;
    private final Linear kProj;
    private final Linear vProj;
    private final Linear outProj;
    private final int internal;
    private final int heads;
    private final int headDim;
    private final float divisor;

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    DecoderAttention(Linear qProj, Linear kProj, Linear vProj, Linear outProj, int heads) {
        this.internal = qProj.out();
        if (internal % heads != 0) {
            throw new IllegalArgumentException(heads + " heads do not divide internal width " + internal);
        }
        this.qProj = qProj;
        this.kProj = kProj;
        this.vProj = vProj;
        this.outProj = outProj;
        this.heads = heads;
        this.headDim = internal / heads;
        this.divisor = (float) Math.sqrt(headDim);
    }

    public static DecoderAttention load(StateDict sd, String prefix, int dim, int internal, int heads) {
        return new DecoderAttention(
                Linear.load(sd, prefix + ".q_proj", dim, internal),
                Linear.load(sd, prefix + ".k_proj", dim, internal),
                Linear.load(sd, prefix + ".v_proj", dim, internal),
                Linear.load(sd, prefix + ".out_proj", internal, dim),
                heads);
    }

    /** Attention of queries q [nq, dim] over keys k [nk, dim] with values v [nk, dim]; returns [nq, dim]. */
    public float[] forward(CpuThreadPool pool, float[] q, int nq, float[] k, float[] v, int nk) {
        float[] qp = qProj.forward(pool, q, nq);
        float[] kp = kProj.forward(pool, k, nk);
        float[] vp = vProj.forward(pool, v, nk);
        float[] attended = new float[nq * internal];
        int blocks = (nq + QUERY_BLOCK - 1) / QUERY_BLOCK;
        pool.forEach(heads * blocks, t -> attendBlock(qp, kp, vp, nq, nk, t / blocks, t % blocks, attended));
        return outProj.forward(pool, attended, nq);
    }

    private void attendBlock(float[] qp, float[] kp, float[] vp, int nq, int nk, int head, int block,
            float[] out) {
        Scratch s = SCRATCH.get();
        s.ensure(nk, headDim);
        int off = head * headDim;
        for (int t = 0; t < nk; t++) {
            float[] vRow = s.values[t];
            for (int d = 0; d < headDim; d++) {
                s.keysT[d][t] = kp[t * internal + off + d];
                vRow[d] = vp[t * internal + off + d];
            }
        }
        float[] sc = s.scores;
        float[] o = s.o;
        int last = Math.min(nq, (block + 1) * QUERY_BLOCK);
        for (int i = block * QUERY_BLOCK; i < last; i++) {
            java.util.Arrays.fill(sc, 0, nk, 0f);
            for (int d = 0; d < headDim; d++) {
                float qd = qp[i * internal + off + d];
                float[] kd = s.keysT[d];
                for (int t = 0; t < nk; t++) {
                    sc[t] += qd * kd[t];
                }
            }
            for (int t = 0; t < nk; t++) {
                sc[t] = sc[t] / divisor;
            }
            CpuOps.softmax(sc, 0, nk);
            java.util.Arrays.fill(o, 0, headDim, 0f);
            for (int t = 0; t < nk; t++) {
                float p = sc[t];
                float[] vRow = s.values[t];
                for (int d = 0; d < headDim; d++) {
                    o[d] += p * vRow[d];
                }
            }
            System.arraycopy(o, 0, out, i * internal + off, headDim);
        }
    }

    private static final class Scratch {
        float[][] keysT = new float[0][0];
        float[][] values = new float[0][0];
        float[] scores = new float[0];
        float[] o = new float[0];

        void ensure(int keys, int headDim) {
            if (keysT.length != headDim || keysT[0].length < keys) {
                keysT = new float[headDim][keys];
            }
            if (values.length < keys || values[0].length != headDim) {
                values = new float[keys][headDim];
            }
            if (scores.length < keys) {
                scores = new float[keys];
            }
            if (o.length != headDim) {
                o = new float[headDim];
            }
        }
    }
}
