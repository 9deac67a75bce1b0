package io.samstream.gpu.cpu;

import io.samstream.gpu.checkpoint.StateDict;

/**
 * One {@code TwoWayAttentionBlock} of the mask decoder's transformer. With queries (tokens) Q, their
 * positional embedding Qpe (the original tokens), keys (image) K and Kpe (the dense positional encoding):
 * <ol>
 *   <li>self attention: first layer Q = attn(Q, Q, Q) (replacing Q, no PE); later layers
 *       Q = Q + attn(Q+Qpe, Q+Qpe, Q); then norm1
 *   <li>Q = norm2(Q + attn(Q+Qpe, K+Kpe, K)), tokens to image
 *   <li>Q = norm3(Q + lin2(relu(lin1(Q))))
 *   <li>K = norm4(K + attn(K+Kpe, Q+Qpe, Q)), image to tokens
 * </ol>
 */
public final class TwoWayBlock {
    private final DecoderAttention selfAttn;
    private final LayerNorm norm1;
    private final DecoderAttention tokenToImage;
    private final LayerNorm norm2;
    private final Linear lin1;
    private final Linear lin2;
    private final LayerNorm norm3;
    private final LayerNorm norm4;
    private final DecoderAttention imageToToken;
    private final boolean skipFirstLayerPe;
    private final int dim;

    private TwoWayBlock(DecoderAttention selfAttn, LayerNorm norm1, DecoderAttention tokenToImage, LayerNorm norm2,
            Linear lin1, Linear lin2, LayerNorm norm3, LayerNorm norm4, DecoderAttention imageToToken,
            boolean skipFirstLayerPe, int dim) {
        this.selfAttn = selfAttn;
        this.norm1 = norm1;
        this.tokenToImage = tokenToImage;
        this.norm2 = norm2;
        this.lin1 = lin1;
        this.lin2 = lin2;
        this.norm3 = norm3;
        this.norm4 = norm4;
        this.imageToToken = imageToToken;
        this.skipFirstLayerPe = skipFirstLayerPe;
        this.dim = dim;
    }

    public static TwoWayBlock load(StateDict sd, String prefix, int dim, int heads, int mlpDim, int downsample,
            boolean skipFirstLayerPe) {
        double eps = LayerNorm.DECODER_EPS;
        return new TwoWayBlock(
                DecoderAttention.load(sd, prefix + "self_attn", dim, dim, heads),
                LayerNorm.load(sd, prefix + "norm1", dim, eps),
                DecoderAttention.load(sd, prefix + "cross_attn_token_to_image", dim, dim / downsample, heads),
                LayerNorm.load(sd, prefix + "norm2", dim, eps),
                Linear.load(sd, prefix + "mlp.lin1", dim, mlpDim),
                Linear.load(sd, prefix + "mlp.lin2", mlpDim, dim),
                LayerNorm.load(sd, prefix + "norm3", dim, eps),
                LayerNorm.load(sd, prefix + "norm4", dim, eps),
                DecoderAttention.load(sd, prefix + "cross_attn_image_to_token", dim, dim / downsample, heads),
                skipFirstLayerPe,
                dim);
    }

    /** Updates queries [nq, dim] and keys [nk, dim] in place. */
    public void forward(CpuThreadPool pool, float[] queries, float[] queryPe, int nq, float[] keys, float[] keyPe,
            int nk) {
        int qn = nq * dim;
        int kn = nk * dim;
        if (skipFirstLayerPe) {
            float[] out = selfAttn.forward(pool, queries, nq, queries, queries, nq);
            System.arraycopy(out, 0, queries, 0, qn);
        } else {
            float[] q = CpuOps.add(queries, queryPe, qn);
            CpuOps.addInPlace(pool, queries, selfAttn.forward(pool, q, nq, q, queries, nq), qn);
        }
        norm1.apply(pool, queries, nq, queries);

        float[] q = CpuOps.add(queries, queryPe, qn);
        float[] k = CpuOps.add(keys, keyPe, kn);
        CpuOps.addInPlace(pool, queries, tokenToImage.forward(pool, q, nq, k, keys, nk), qn);
        norm2.apply(pool, queries, nq, queries);

        float[] hidden = lin1.forward(pool, queries, nq);
        CpuOps.relu(hidden, hidden.length);
        CpuOps.addInPlace(pool, queries, lin2.forward(pool, hidden, nq), qn);
        norm3.apply(pool, queries, nq, queries);

        q = CpuOps.add(queries, queryPe, qn);
        k = CpuOps.add(keys, keyPe, kn);
        CpuOps.addInPlace(pool, keys, imageToToken.forward(pool, k, nk, q, queries, nq), kn);
        norm4.apply(pool, keys, nk, keys);
    }
}
