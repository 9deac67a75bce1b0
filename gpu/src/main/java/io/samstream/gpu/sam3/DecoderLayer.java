package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.LayerNorm;
import io.samstream.gpu.cpu.Linear;

/**
 * One layer of SAM 3's DETR decoder ({@code TransformerDecoderLayer}, post-LN), over the presence token followed by
 * the object queries: self-attention (query positions on queries and keys, none for the presence token), norm2;
 * cross-attention to the prompt tokens (padding masked), catext_norm; cross-attention to the encoder's memory (its
 * position on the keys) with the box relative position bias (zero for the presence token), norm1; ReLU
 * feed-forward, norm3.
 */
final class DecoderLayer {
    private final Attention selfAttn;
    private final LayerNorm norm2;
    private final Attention textAttn;
    private final LayerNorm textNorm;
    private final Attention crossAttn;
    private final LayerNorm norm1;
    private final Linear linear1;
    private final Linear linear2;
    private final LayerNorm norm3;
    private final int d;
    private final int heads;

    DecoderLayer(StateDict sd, String p, int d, int heads, int ffn) {
        this.selfAttn = Attention.load(sd, p + "self_attn", d, heads);
        this.norm2 = LayerNorm.load(sd, p + "norm2", d, Sam3Config.NORM_EPS);
        this.textAttn = Attention.load(sd, p + "ca_text", d, heads);
        this.textNorm = LayerNorm.load(sd, p + "catext_norm", d, Sam3Config.NORM_EPS);
        this.crossAttn = Attention.load(sd, p + "cross_attn", d, heads);
        this.norm1 = LayerNorm.load(sd, p + "norm1", d, Sam3Config.NORM_EPS);
        this.linear1 = Linear.load(sd, p + "linear1", d, ffn);
        this.linear2 = Linear.load(sd, p + "linear2", ffn, d);
        this.norm3 = LayerNorm.load(sd, p + "norm3", d, Sam3Config.NORM_EPS);
        this.d = d;
        this.heads = heads;
    }

    /**
     * x [1 + n, d]: the presence token then the n queries, in place.
     *
     * @param pos       [1 + n, d], zero for the presence token
     * @param bias      [heads, n, tokens] over the memory's tokens
     */
    void forward(CpuThreadPool pool, float[] x, int n, float[] pos, Prompt prompt, float[] memory,
            float[] memoryPos, int tokens, float[] bias) {
        int rows = n + 1;
        float[] qk = CpuOps.add(x, pos, rows * d);
        CpuOps.addInPlace(pool, x, selfAttn.forward(pool, qk, rows, qk, x, rows), rows * d);
        norm2.apply(pool, x, rows, x);
        float[] q = CpuOps.add(x, pos, rows * d);
        CpuOps.addInPlace(pool, x, textAttn.forward(pool, q, rows, prompt.rows(), prompt.rows(), prompt.length(),
                null, false, prompt.padding()), rows * d);
        textNorm.apply(pool, x, rows, x);
        float[] withPresence = new float[heads * rows * tokens];
        for (int h = 0; h < heads; h++) {
            System.arraycopy(bias, h * n * tokens, withPresence, (h * rows + 1) * tokens, n * tokens);
        }
        q = CpuOps.add(x, pos, rows * d);
        float[] keys = CpuOps.add(memory, memoryPos, tokens * d);
        CpuOps.addInPlace(pool, x, crossAttn.forward(pool, q, rows, keys, memory, tokens, withPresence, false,
                null), rows * d);
        norm1.apply(pool, x, rows, x);
        float[] f = linear1.forward(pool, x, rows);
        CpuOps.relu(f, f.length);
        CpuOps.addInPlace(pool, x, linear2.forward(pool, f, rows), rows * d);
        norm3.apply(pool, x, rows, x);
    }
}
