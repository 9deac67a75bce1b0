package io.samstream.gpu.cpu;

import io.samstream.gpu.checkpoint.StateDict;

/**
 * One ViT block of the image encoder, on the token grid x [h*w, dim]:
 * x = x + attn(norm1(x)); x = x + lin2(gelu(lin1(norm2(x)))). The attention is windowed or global.
 */
final class EncoderBlock {
    private final LayerNorm norm1;
    private final EncoderAttention attention;
    private final LayerNorm norm2;
    private final Linear lin1;
    private final Linear lin2;
    private final int dim;

    private EncoderBlock(LayerNorm norm1, EncoderAttention attention, LayerNorm norm2, Linear lin1, Linear lin2,
            int dim) {
        this.norm1 = norm1;
        this.attention = attention;
        this.norm2 = norm2;
        this.lin1 = lin1;
        this.lin2 = lin2;
        this.dim = dim;
    }

    static EncoderBlock load(StateDict sd, String prefix, int dim, int heads, int mlpDim, WindowGrid grid) {
        return new EncoderBlock(
                LayerNorm.load(sd, prefix + "norm1", dim, LayerNorm.ENCODER_EPS),
                EncoderAttention.load(sd, prefix + "attn", dim, heads, grid),
                LayerNorm.load(sd, prefix + "norm2", dim, LayerNorm.ENCODER_EPS),
                Linear.load(sd, prefix + "mlp.lin1", dim, mlpDim),
                Linear.load(sd, prefix + "mlp.lin2", mlpDim, dim),
                dim);
    }

    /** Updates x [tokens, dim] in place; {@code normed} [tokens, dim] is scratch. */
    void forward(CpuThreadPool pool, float[] x, int tokens, float[] normed) {
        int n = tokens * dim;
        norm1.apply(pool, x, tokens, normed);
        CpuOps.addInPlace(pool, x, attention.forward(pool, normed, tokens), n);
        norm2.apply(pool, x, tokens, normed);
        float[] hidden = lin1.forward(pool, normed, tokens);
        CpuOps.gelu(pool, hidden, hidden.length);
        lin2.forward(pool, hidden, tokens, normed);
        CpuOps.addInPlace(pool, x, normed, n);
    }
}
