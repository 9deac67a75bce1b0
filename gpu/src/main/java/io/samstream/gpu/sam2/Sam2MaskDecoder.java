package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.ConvTranspose2x2;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.DecoderAttention;
import io.samstream.gpu.cpu.LayerNorm;
import io.samstream.gpu.cpu.Mlp;
import io.samstream.gpu.cpu.TwoWayBlock;
import io.samstream.gpu.tensor.Tensor;
import java.util.HashMap;
import java.util.Map;

/**
 * SAM 2's mask decoder ({@code sam2.modeling.sam.mask_decoder.MaskDecoder}): SAM's two-way transformer over
 * the tokens [object score, IoU, 4 mask tokens, prompts] and the image, then the upscaling with the
 * high-resolution features added (dc1(src) + s1 -> LayerNorm2d -> GELU -> dc2 + s0 -> GELU), hypernetwork
 * masks, the IoU head (sigmoid) and the object-score head (3-layer MLP on the first token).
 *
 * <p>Output selection as the reference: multimask gives masks 1..3 (and their tokens, for the object pointer);
 * single-mask gives mask 0, or, when its stability score (area above +0.05 over area above -0.05) is below
 * 0.98, the best-IoU mask of 1..3 (the pointer token stays token 0).
 */
public final class Sam2MaskDecoder {
    static final float STABILITY_DELTA = 0.05f;
    static final float STABILITY_THRESH = 0.98f;

    private final int dim;
    private final int side;
    private final TwoWayBlock[] layers;
    private final DecoderAttention finalAttn;
    private final LayerNorm normFinal;
    private final float[] outputTokens;
    private final ConvTranspose2x2 dc1;
    private final LayerNorm ln1;
    private final ConvTranspose2x2 dc2;
    private final Mlp[] hyper;
    private final Mlp iouHead;
    private final Mlp scoreHead;

    /** Decoder output: masks [m][4f*4f], ious [m], tokens [m][dim] for the pointer, and the object score. */
    public record Output(float[][] masks, float[] ious, float[][] tokens, float objectScore) {}

    public Sam2MaskDecoder(StateDict sd, Sam2Config config) {
        String p = "sam_mask_decoder.";
        this.dim = config.hidden();
        this.side = config.featureSize();
        StateDict renamed = mlpNamedAsSam(sd, p + "transformer.layers.");
        this.layers = new TwoWayBlock[2];
        for (int i = 0; i < 2; i++) {
            layers[i] = TwoWayBlock.load(renamed, p + "transformer.layers." + i + ".", dim, Sam2Config.DECODER_HEADS,
                    config.decoderMlp(), 2, i == 0);
        }
        this.finalAttn = DecoderAttention.load(sd, p + "transformer.final_attn_token_to_image", dim, dim / 2,
                Sam2Config.DECODER_HEADS);
        this.normFinal = LayerNorm.load(sd, p + "transformer.norm_final_attn", dim, LayerNorm.DECODER_EPS);
        this.outputTokens = new float[6 * dim];
        System.arraycopy(sd.get(p + "obj_score_token.weight", 1, dim).data(), 0, outputTokens, 0, dim);
        System.arraycopy(sd.get(p + "iou_token.weight", 1, dim).data(), 0, outputTokens, dim, dim);
        System.arraycopy(sd.get(p + "mask_tokens.weight", 4, dim).data(), 0, outputTokens, 2 * dim, 4 * dim);
        this.dc1 = ConvTranspose2x2.load(sd, p + "output_upscaling.0", dim, dim / 4);
        this.ln1 = LayerNorm.load(sd, p + "output_upscaling.1", dim / 4, LayerNorm.LAYER_NORM_2D_EPS);
        this.dc2 = ConvTranspose2x2.load(sd, p + "output_upscaling.3", dim / 4, dim / 8);
        this.hyper = new Mlp[4];
        for (int i = 0; i < 4; i++) {
            hyper[i] = Mlp.load(sd, p + "output_hypernetworks_mlps." + i, dim, dim, dim / 8, 3);
        }
        this.iouHead = Mlp.load(sd, p + "iou_prediction_head", dim, config.iouHidden(), 4, 3);
        this.scoreHead = Mlp.load(sd, p + "pred_obj_score_head", dim, dim, 1, 3);
    }

    /** SAM's TwoWayBlock names its MLP lin1 / lin2; SAM 2's is an MLP with layers.0 / layers.1. */
    private static StateDict mlpNamedAsSam(StateDict sd, String prefix) {
        Map<String, Tensor> map = new HashMap<>();
        for (String k : sd.keys()) {
            if (k.startsWith(prefix)) {
                map.put(k.replace(".mlp.layers.0.", ".mlp.lin1.").replace(".mlp.layers.1.", ".mlp.lin2."), sd.get(k));
            }
        }
        return new StateDict(sd.source(), map);
    }

    /**
     * Decodes an image embedding [f*f, dim] (memory-conditioned) with sparse prompt embeddings [n, dim] and the
     * dense position encoding [f*f, dim] plus the dense prompt embedding: one vector [dim] for every position (no
     * mask prompt, {@code no_mask_embed}) or a map [f*f, dim] (a mask prompt's embedding).
     */
    public Output decode(CpuThreadPool pool, float[] image, float[] sparse, int n, float[] densePe, float[] dense,
            FrameFeatures feats, boolean multimask) {
        int nq = 6 + n;
        float[] tokens = new float[nq * dim];
        System.arraycopy(outputTokens, 0, tokens, 0, 6 * dim);
        System.arraycopy(sparse, 0, tokens, 6 * dim, n * dim);
        int nk = side * side;
        float[] keys = new float[nk * dim];
        boolean map = dense.length == nk * dim;
        if (!map && dense.length != dim) {
            throw new IllegalArgumentException("dense prompt embedding of " + dense.length + " values: " + dim
                    + " (one vector) or " + nk * dim + " (a map) expected");
        }
        for (int t = 0; t < nk; t++) {
            int d0 = map ? t * dim : 0;
            for (int c = 0; c < dim; c++) {
                keys[t * dim + c] = image[t * dim + c] + dense[d0 + c];
            }
        }
        float[] queries = tokens.clone();
        for (TwoWayBlock layer : layers) {
            layer.forward(pool, queries, tokens, nq, keys, densePe, nk);
        }
        float[] q = CpuOps.add(queries, tokens, nq * dim);
        float[] k = CpuOps.add(keys, densePe, nk * dim);
        CpuOps.addInPlace(pool, queries, finalAttn.forward(pool, q, nq, k, keys, nk), nq * dim);
        normFinal.apply(pool, queries, nq, queries);

        // upscaling with the high-resolution features
        float[] up = dc1.forward(pool, keys, side, side);
        CpuOps.addInPlace(pool, up, feats.s1(), up.length);
        ln1.apply(pool, up, 4 * nk, up);
        CpuOps.gelu(pool, up, up.length);
        float[] up2 = dc2.forward(pool, up, 2 * side, 2 * side);
        CpuOps.addInPlace(pool, up2, feats.s0(), up2.length);
        CpuOps.gelu(pool, up2, up2.length);
        int pixels = 16 * nk;
        int c8 = dim / 8;
        float[][] masks = new float[4][];
        float[][] maskTokens = new float[4][];
        for (int i = 0; i < 4; i++) {
            maskTokens[i] = new float[dim];
            System.arraycopy(queries, (2 + i) * dim, maskTokens[i], 0, dim);
            float[] h = hyper[i].forward(pool, maskTokens[i], 1);
            float[] m = new float[pixels];
            for (int px = 0; px < pixels; px++) {
                float acc = 0f;
                for (int c = 0; c < c8; c++) {
                    acc += h[c] * up2[px * c8 + c];
                }
                m[px] = acc;
            }
            masks[i] = m;
        }
        float[] iouToken = new float[dim];
        System.arraycopy(queries, dim, iouToken, 0, dim);
        float[] iou = iouHead.forward(pool, iouToken, 1);
        for (int i = 0; i < 4; i++) {
            iou[i] = sigmoid(iou[i]);
        }
        float[] scoreToken = new float[dim];
        System.arraycopy(queries, 0, scoreToken, 0, dim);
        float score = scoreHead.forward(pool, scoreToken, 1)[0];

        if (multimask) {
            return new Output(new float[][] {masks[1], masks[2], masks[3]}, new float[] {iou[1], iou[2], iou[3]},
                    new float[][] {maskTokens[1], maskTokens[2], maskTokens[3]}, score);
        }
        if (stability(masks[0]) >= STABILITY_THRESH) {
            return new Output(new float[][] {masks[0]}, new float[] {iou[0]}, new float[][] {maskTokens[0]}, score);
        }
        int best = 1 + argmax(new float[] {iou[1], iou[2], iou[3]});
        return new Output(new float[][] {masks[best]}, new float[] {iou[best]}, new float[][] {maskTokens[0]}, score);
    }

    static float stability(float[] logits) {
        int inter = 0;
        int union = 0;
        for (float v : logits) {
            if (v > STABILITY_DELTA) {
                inter++;
            }
            if (v > -STABILITY_DELTA) {
                union++;
            }
        }
        return union > 0 ? (float) inter / union : 1f;
    }

    public static int argmax(float[] v) {
        int best = 0;
        for (int i = 1; i < v.length; i++) {
            if (v[i] > v[best]) {
                best = i;
            }
        }
        return best;
    }

    public static float sigmoid(float x) {
        return (float) (1.0 / (1.0 + Math.exp(-x)));
    }
}
