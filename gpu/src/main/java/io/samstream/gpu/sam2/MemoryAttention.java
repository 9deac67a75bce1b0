package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.LayerNorm;
import io.samstream.gpu.cpu.Linear;

/**
 * The memory attention ({@code MemoryAttention}, SAM 2.1 settings): x = curr + 0.1 * curr_pos, then per layer
 * x += selfAttn(norm1(x)) (RoPE on q and k, no position added), x += crossAttn(q = norm2(x),
 * k = memory + memory_pos, v = memory) (RoPE on q and the spatial memory keys, not the object-pointer tokens),
 * x += linear2(relu(linear1(norm3(x)))); finally LayerNorm.
 */
public final class MemoryAttention {
    private static final double EPS = 1e-5;
    /** The rotary encoding's base (RoPEAttention's rope_theta). */
    public static final double ROPE_THETA = 10000.0;

    private final RopeAttention[] selfAttn;
    private final RopeAttention[] crossAttn;
    private final LayerNorm[] norm1;
    private final LayerNorm[] norm2;
    private final LayerNorm[] norm3;
    private final Linear[] linear1;
    private final Linear[] linear2;
    private final LayerNorm norm;
    private final int dim;
    private final int memDim;

    public MemoryAttention(StateDict sd, Sam2Config config) {
        int layers = config.memAttnLayers();
        this.dim = config.hidden();
        this.memDim = config.memDim();
        int heads = config.layout().memAttnHeads();
        RotaryEncoding rope = new RotaryEncoding(dim / heads, config.featureSize(), ROPE_THETA);
        selfAttn = new RopeAttention[layers];
        crossAttn = new RopeAttention[layers];
        norm1 = new LayerNorm[layers];
        norm2 = new LayerNorm[layers];
        norm3 = new LayerNorm[layers];
        linear1 = new Linear[layers];
        linear2 = new Linear[layers];
        for (int i = 0; i < layers; i++) {
            String p = "memory_attention.layers." + i + ".";
            selfAttn[i] = new RopeAttention(sd, p + "self_attn.", dim, dim, heads, rope);
            crossAttn[i] = new RopeAttention(sd, p + "cross_attn_image.", dim, memDim, heads, rope);
            norm1[i] = LayerNorm.load(sd, p + "norm1", dim, EPS);
            norm2[i] = LayerNorm.load(sd, p + "norm2", dim, EPS);
            norm3[i] = LayerNorm.load(sd, p + "norm3", dim, EPS);
            linear1[i] = Linear.load(sd, p + "linear1", dim, config.memAttnFfn());
            linear2[i] = Linear.load(sd, p + "linear2", config.memAttnFfn(), dim);
        }
        this.norm = LayerNorm.load(sd, "memory_attention.norm", dim, EPS);
    }

    /**
     * Conditions curr [n, dim] (position curr_pos) on memory [m, memDim] (position memory_pos), whose last
     * {@code pointerTokens} rows are object pointers.
     */
    public float[] forward(CpuThreadPool pool, float[] curr, float[] currPos, int n, float[] memory, float[] memoryPos,
            int m, int pointerTokens) {
        float[] x = new float[n * dim];
        for (int i = 0; i < x.length; i++) {
            x[i] = curr[i] + 0.1f * currPos[i];
        }
        float[] keys = CpuOps.add(memory, memoryPos, m * memDim);
        for (int l = 0; l < selfAttn.length; l++) {
            float[] t = norm1[l].apply(pool, x, n);
            CpuOps.addInPlace(pool, x, selfAttn[l].forward(pool, t, n, t, t, n, 0), x.length);
            t = norm2[l].apply(pool, x, n);
            CpuOps.addInPlace(pool, x, crossAttn[l].forward(pool, t, n, keys, memory, m, pointerTokens), x.length);
            t = norm3[l].apply(pool, x, n);
            float[] h = linear1[l].forward(pool, t, n);
            CpuOps.relu(h, h.length);
            CpuOps.addInPlace(pool, x, linear2[l].forward(pool, h, n), x.length);
        }
        return norm.apply(pool, x, n);
    }
}
