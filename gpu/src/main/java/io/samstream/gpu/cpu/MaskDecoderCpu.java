package io.samstream.gpu.cpu;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;

/**
 * SAM's mask decoder in fp32: the two-way transformer between the output tokens (IoU token, mask tokens,
 * sparse prompts) and the image embedding plus dense prompt, then the upscaled image features weighted by
 * each mask token's hypernetwork output, and the IoU head on the IoU token.
 */
final class MaskDecoderCpu {
    private final SamConfig config;
    private final float[] outputTokens;
    private final TwoWayBlock[] layers;
    private final DecoderAttention finalAttn;
    private final LayerNorm finalNorm;
    private final ConvTranspose2x2 upscale1;
    private final LayerNorm upscaleNorm;
    private final ConvTranspose2x2 upscale2;
    private final Mlp[] hypernetworks;
    private final Mlp iouHead;
    private final int maskTokens;

    MaskDecoderCpu(StateDict sd, SamConfig c) {
        this.config = c;
        int dim = c.promptDim();
        int heads = c.decoderHeads();
        int down = c.attentionDownsample();
        this.maskTokens = c.numMultimaskOutputs() + 1;
        String md = "mask_decoder.";
        float[] iou = sd.get(md + "iou_token.weight", 1, dim).data();
        float[] masks = sd.get(md + "mask_tokens.weight", maskTokens, dim).data();
        this.outputTokens = new float[(1 + maskTokens) * dim];
        System.arraycopy(iou, 0, outputTokens, 0, dim);
        System.arraycopy(masks, 0, outputTokens, dim, maskTokens * dim);
        this.layers = new TwoWayBlock[c.decoderDepth()];
        for (int i = 0; i < layers.length; i++) {
            layers[i] = TwoWayBlock.load(sd, md + "transformer.layers." + i + ".", dim, heads, c.decoderMlpDim(),
                    down, i == 0);
        }
        this.finalAttn = DecoderAttention.load(sd, md + "transformer.final_attn_token_to_image", dim, dim / down,
                heads);
        this.finalNorm = LayerNorm.load(sd, md + "transformer.norm_final_attn", dim, LayerNorm.DECODER_EPS);
        this.upscale1 = ConvTranspose2x2.load(sd, md + "output_upscaling.0", dim, dim / 4);
        this.upscaleNorm = LayerNorm.load(sd, md + "output_upscaling.1", dim / 4, LayerNorm.LAYER_NORM_2D_EPS);
        this.upscale2 = ConvTranspose2x2.load(sd, md + "output_upscaling.3", dim / 4, dim / 8);
        this.hypernetworks = new Mlp[maskTokens];
        for (int i = 0; i < maskTokens; i++) {
            hypernetworks[i] = Mlp.load(sd, md + "output_hypernetworks_mlps." + i, dim, dim, dim / 8, 3);
        }
        this.iouHead = Mlp.load(sd, md + "iou_prediction_head", dim, c.iouHeadHiddenDim(), maskTokens,
                c.iouHeadDepth());
    }

    /**
     * Predicts masks for one image and one prompt set.
     *
     * @param embedding   the image embedding, channels-first [C, E, E] starting at {@code offset}
     * @param sparse      sparse prompt embeddings [nSparse, C]
     * @param dense       dense prompt embedding, channels-last [E*E, C]
     * @param densePe     positional encoding of the grid, channels-last [E*E, C]
     */
    DecoderOutput decode(CpuThreadPool pool, float[] embedding, int offset, float[] sparse, int nSparse,
            float[] dense, float[] densePe, boolean multimask) {
        int dim = config.promptDim();
        int e = config.embeddingSize();
        int pixels = e * e;

        int nq = 1 + maskTokens + nSparse;
        float[] tokens = new float[nq * dim];
        System.arraycopy(outputTokens, 0, tokens, 0, outputTokens.length);
        System.arraycopy(sparse, 0, tokens, outputTokens.length, nSparse * dim);

        // src = image embedding + dense prompt, as tokens [E*E, C].
        float[] keys = new float[pixels * dim];
        for (int t = 0; t < pixels; t++) {
            for (int ch = 0; ch < dim; ch++) {
                keys[t * dim + ch] = embedding[offset + ch * pixels + t] + dense[t * dim + ch];
            }
        }

        float[] queries = tokens.clone();
        for (TwoWayBlock layer : layers) {
            layer.forward(pool, queries, tokens, nq, keys, densePe, pixels);
        }
        float[] q = CpuOps.add(queries, tokens, nq * dim);
        float[] k = CpuOps.add(keys, densePe, pixels * dim);
        CpuOps.addInPlace(pool, queries, finalAttn.forward(pool, q, nq, k, keys, pixels), nq * dim);
        finalNorm.apply(pool, queries, nq, queries);

        // Upscale the image side 4x: [E, E, C] -> [2E, 2E, C/4] -> [4E, 4E, C/8].
        float[] up = upscale1.forward(pool, keys, e, e);
        upscaleNorm.apply(pool, up, 4 * pixels, up);
        CpuOps.gelu(pool, up, up.length);
        up = upscale2.forward(pool, up, 2 * e, 2 * e);
        CpuOps.gelu(pool, up, up.length);

        int first = multimask ? 1 : 0;
        int count = multimask ? maskTokens - 1 : 1;
        int lowRes = 4 * e;
        int lowPixels = lowRes * lowRes;
        int channels = upscale2.outChannels();
        float[] masks = new float[count * lowPixels];
        for (int m = 0; m < count; m++) {
            int token = first + m;
            float[] tokenOut = java.util.Arrays.copyOfRange(queries, (1 + token) * dim, (2 + token) * dim);
            float[] weights = hypernetworks[token].forward(pool, tokenOut, 1);
            int base = m * lowPixels;
            float[] upFinal = up;
            pool.forRange(lowPixels, 4096, (p0, p1) -> {
                for (int p = p0; p < p1; p++) {
                    float acc = 0;
                    for (int ch = 0; ch < channels; ch++) {
                        acc += weights[ch] * upFinal[p * channels + ch];
                    }
                    masks[base + p] = acc;
                }
            });
        }

        float[] iou = iouHead.forward(pool, java.util.Arrays.copyOfRange(queries, 0, dim), 1);
        float[] selected = java.util.Arrays.copyOfRange(iou, first, first + count);
        return new DecoderOutput(new Tensor(masks, count, lowRes, lowRes), selected);
    }
}
