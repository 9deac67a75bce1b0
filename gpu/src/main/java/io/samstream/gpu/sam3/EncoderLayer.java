package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.LayerNorm;
import io.samstream.gpu.cpu.Linear;

/**
 * SAM 3's pre-LN {@code TransformerEncoderLayer} (the fusion encoder's and the geometry encoder's): self-attention
 * of norm1(x) (with the queries' position added to its queries and keys when {@code posAtAttention}), cross-attention
 * of norm2(x) to a memory, a ReLU feed-forward of norm3(x); each added to x. The cross-attention's keys come from the
 * caller: the memory plus its position for the geometry encoder (which adds them once for all its layers, as they
 * share one memory), the memory itself for the fusion encoder.
 */
final class EncoderLayer {
    private final LayerNorm norm1;
    private final LayerNorm norm2;
    private final LayerNorm norm3;
    private final Attention selfAttn;
    private final Attention crossAttn;
    private final Linear linear1;
    private final Linear linear2;
    private final boolean posAtAttention;
    private final int d;

    EncoderLayer(StateDict sd, String p, int d, int heads, int ffn, boolean posAtAttention) {
        this.norm1 = LayerNorm.load(sd, p + "norm1", d, Sam3Config.NORM_EPS);
        this.norm2 = LayerNorm.load(sd, p + "norm2", d, Sam3Config.NORM_EPS);
        this.norm3 = LayerNorm.load(sd, p + "norm3", d, Sam3Config.NORM_EPS);
        this.selfAttn = Attention.load(sd, p + "self_attn", d, heads);
        this.crossAttn = Attention.load(sd, p + "cross_attn_image", d, heads);
        this.linear1 = Linear.load(sd, p + "linear1", d, ffn);
        this.linear2 = Linear.load(sd, p + "linear2", ffn, d);
        this.posAtAttention = posAtAttention;
        this.d = d;
    }

    /**
     * x [n, d] in place.
     *
     * @param pos        the queries' position [n, d] (used when posAtAttention)
     * @param padding    the queries' key padding for self-attention, or null
     * @param memory     the cross-attention's values [m, d]
     * @param memoryKeys its keys [m, d]: the memory, or the memory plus its position
     * @param memoryPadding the memory's key padding, or null
     */
    void forward(CpuThreadPool pool, float[] x, int n, float[] pos, boolean[] padding, float[] memory,
            float[] memoryKeys, int m, boolean[] memoryPadding) {
        float[] h = norm1.apply(pool, x, n);
        float[] qk = posAtAttention ? CpuOps.add(h, pos, n * d) : h;
        CpuOps.addInPlace(pool, x, selfAttn.forward(pool, qk, n, qk, h, n, null, false, padding), n * d);
        h = norm2.apply(pool, x, n);
        CpuOps.addInPlace(pool, x, crossAttn.forward(pool, h, n, memoryKeys, memory, m, null, false, memoryPadding),
                n * d);
        float[] f = linear1.forward(pool, norm3.apply(pool, x, n), n);
        CpuOps.relu(f, f.length);
        CpuOps.addInPlace(pool, x, linear2.forward(pool, f, n), n * d);
    }
}
