package io.samstream.gpu.model;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Every tensor a SAM checkpoint holds, under Meta's segment-anything key names, with the shape it must
 * have for a given {@link SamConfig}. The loaders validate against it (so a wrong file fails at load
 * with "missing key X" or "shape Y where Z expected", not deep in a forward pass), and tests use it to
 * make random models of any size.
 */
public final class SamCheckpointSchema {
    private SamCheckpointSchema() {}

    /** Key to expected shape, in the order Meta's modules declare them. */
    public static Map<String, int[]> expectedShapes(SamConfig c) {
        Map<String, int[]> s = new LinkedHashMap<>();
        imageEncoder(c, s);
        promptEncoder(c, s);
        maskDecoder(c, s);
        return s;
    }

    private static void imageEncoder(SamConfig c, Map<String, int[]> s) {
        int d = c.encoderDim();
        int e = c.embeddingSize();
        int p = c.promptDim();
        int hd = c.encoderHeadDim();
        String enc = "image_encoder.";
        s.put(enc + "pos_embed", new int[] {1, e, e, d});
        s.put(enc + "patch_embed.proj.weight", new int[] {d, 3, c.patchSize(), c.patchSize()});
        s.put(enc + "patch_embed.proj.bias", new int[] {d});
        for (int i = 0; i < c.encoderDepth(); i++) {
            String b = enc + "blocks." + i + ".";
            int span = c.isGlobalAttention(i) ? e : c.windowSize();
            layerNorm(s, b + "norm1", d);
            linear(s, b + "attn.qkv", d, 3 * d);
            linear(s, b + "attn.proj", d, d);
            s.put(b + "attn.rel_pos_h", new int[] {2 * span - 1, hd});
            s.put(b + "attn.rel_pos_w", new int[] {2 * span - 1, hd});
            layerNorm(s, b + "norm2", d);
            linear(s, b + "mlp.lin1", d, c.encoderMlpDim());
            linear(s, b + "mlp.lin2", c.encoderMlpDim(), d);
        }
        s.put(enc + "neck.0.weight", new int[] {p, d, 1, 1});
        layerNorm(s, enc + "neck.1", p);
        s.put(enc + "neck.2.weight", new int[] {p, p, 3, 3});
        layerNorm(s, enc + "neck.3", p);
    }

    private static void promptEncoder(SamConfig c, Map<String, int[]> s) {
        int p = c.promptDim();
        int mi = c.maskInChans();
        String pe = "prompt_encoder.";
        s.put(pe + "pe_layer.positional_encoding_gaussian_matrix", new int[] {2, p / 2});
        for (int i = 0; i < 4; i++) {
            s.put(pe + "point_embeddings." + i + ".weight", new int[] {1, p});
        }
        s.put(pe + "not_a_point_embed.weight", new int[] {1, p});
        s.put(pe + "mask_downscaling.0.weight", new int[] {mi / 4, 1, 2, 2});
        s.put(pe + "mask_downscaling.0.bias", new int[] {mi / 4});
        layerNorm(s, pe + "mask_downscaling.1", mi / 4);
        s.put(pe + "mask_downscaling.3.weight", new int[] {mi, mi / 4, 2, 2});
        s.put(pe + "mask_downscaling.3.bias", new int[] {mi});
        layerNorm(s, pe + "mask_downscaling.4", mi);
        s.put(pe + "mask_downscaling.6.weight", new int[] {p, mi, 1, 1});
        s.put(pe + "mask_downscaling.6.bias", new int[] {p});
        s.put(pe + "no_mask_embed.weight", new int[] {1, p});
    }

    private static void maskDecoder(SamConfig c, Map<String, int[]> s) {
        int p = c.promptDim();
        int tokens = c.numMultimaskOutputs() + 1;
        String md = "mask_decoder.";
        s.put(md + "iou_token.weight", new int[] {1, p});
        s.put(md + "mask_tokens.weight", new int[] {tokens, p});
        for (int i = 0; i < c.decoderDepth(); i++) {
            String l = md + "transformer.layers." + i + ".";
            attention(s, l + "self_attn", p, p);
            layerNorm(s, l + "norm1", p);
            attention(s, l + "cross_attn_token_to_image", p, p / c.attentionDownsample());
            layerNorm(s, l + "norm2", p);
            linear(s, l + "mlp.lin1", p, c.decoderMlpDim());
            linear(s, l + "mlp.lin2", c.decoderMlpDim(), p);
            layerNorm(s, l + "norm3", p);
            layerNorm(s, l + "norm4", p);
            attention(s, l + "cross_attn_image_to_token", p, p / c.attentionDownsample());
        }
        attention(s, md + "transformer.final_attn_token_to_image", p, p / c.attentionDownsample());
        layerNorm(s, md + "transformer.norm_final_attn", p);
        // ConvTranspose2d weights are [in, out, kh, kw].
        s.put(md + "output_upscaling.0.weight", new int[] {p, p / 4, 2, 2});
        s.put(md + "output_upscaling.0.bias", new int[] {p / 4});
        layerNorm(s, md + "output_upscaling.1", p / 4);
        s.put(md + "output_upscaling.3.weight", new int[] {p / 4, p / 8, 2, 2});
        s.put(md + "output_upscaling.3.bias", new int[] {p / 8});
        for (int k = 0; k < tokens; k++) {
            String h = md + "output_hypernetworks_mlps." + k + ".layers.";
            linear(s, h + "0", p, p);
            linear(s, h + "1", p, p);
            linear(s, h + "2", p, p / 8);
        }
        String iou = md + "iou_prediction_head.layers.";
        for (int i = 0; i < c.iouHeadDepth(); i++) {
            int in = i == 0 ? p : c.iouHeadHiddenDim();
            int out = i == c.iouHeadDepth() - 1 ? tokens : c.iouHeadHiddenDim();
            linear(s, iou + i, in, out);
        }
    }

    private static void linear(Map<String, int[]> s, String name, int in, int out) {
        s.put(name + ".weight", new int[] {out, in});
        s.put(name + ".bias", new int[] {out});
    }

    private static void layerNorm(Map<String, int[]> s, String name, int dim) {
        s.put(name + ".weight", new int[] {dim});
        s.put(name + ".bias", new int[] {dim});
    }

    private static void attention(Map<String, int[]> s, String name, int dim, int internal) {
        linear(s, name + ".q_proj", dim, internal);
        linear(s, name + ".k_proj", dim, internal);
        linear(s, name + ".v_proj", dim, internal);
        linear(s, name + ".out_proj", internal, dim);
    }
}
