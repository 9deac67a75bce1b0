package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.sam2.DeterministicWeights;
import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * State_dicts of Meta's SAM 3 image model (the keys and shapes {@code Sam3Image.state_dict()} has, "detector."
 * prefixed as in sam3.pt) for any configuration, with the fixtures' deterministic weights: what a checkpoint of
 * that shape holds, without a file.
 */
final class Sam3Weights {
    private Sam3Weights() {}

    /** The small configuration of the unit tests and of the "tiny" fixture (tools/sam3_fixtures). */
    static final Sam3Config TINY = new Sam3Config(
            new Sam3Config.Vision(112, 14, 48, 4, 2, 222, 4, new int[] {1, 3}, 4, 4),
            new Sam3Config.Text(814, 32, 64, 2, 1, 256, 512),
            new Sam3Config.Detector(32, 4, 2, 64, 2, 64, 20, 1, 64, 7, 3, 64));

    static StateDict stateDict(Sam3Config c) {
        Map<String, int[]> shapes = shapes(c);
        Map<String, Tensor> map = new LinkedHashMap<>();
        shapes.forEach((name, shape) -> map.put(name, new Tensor(DeterministicWeights.values(name, shape), shape)));
        return new StateDict(Path.of("generated-sam3.pt"), map);
    }

    /** Every tensor of the detector, "detector." prefixed, in the module order of Meta's model. */
    static Map<String, int[]> shapes(Sam3Config c) {
        Map<String, int[]> s = new LinkedHashMap<>();
        Sam3Config.Vision v = c.vision();
        Sam3Config.Text t = c.text();
        Sam3Config.Detector d = c.detector();
        int e = v.embedDim();
        int m = d.dModel();
        String trunk = "detector.backbone.vision_backbone.trunk.";
        s.put(trunk + "pos_embed", new int[] {1, 1 + v.pretrainGrid() * v.pretrainGrid(), e});
        s.put(trunk + "patch_embed.proj.weight", new int[] {e, 3, v.patchSize(), v.patchSize()});
        for (int i = 0; i < v.depth(); i++) {
            String b = trunk + "blocks." + i + ".";
            norm(s, b + "norm1", e);
            linear(s, b + "attn.qkv", e, 3 * e);
            linear(s, b + "attn.proj", e, e);
            int side = v.isGlobal(i) ? v.grid() : v.windowSize();
            s.put(b + "attn.freqs_cis", new int[] {side * side, v.headDim() / 2, 2});
            norm(s, b + "norm2", e);
            linear(s, b + "mlp.fc1", e, v.mlpHidden());
            linear(s, b + "mlp.fc2", v.mlpHidden(), e);
        }
        norm(s, trunk + "ln_pre", e);
        String neck = "detector.backbone.vision_backbone.convs.";
        convT(s, neck + "0.dconv_2x2_0", e, e / 2);
        convT(s, neck + "0.dconv_2x2_1", e / 2, e / 4);
        conv(s, neck + "0.conv_1x1", e / 4, m, 1);
        conv(s, neck + "0.conv_3x3", m, m, 3);
        convT(s, neck + "1.dconv_2x2", e, e / 2);
        conv(s, neck + "1.conv_1x1", e / 2, m, 1);
        conv(s, neck + "1.conv_3x3", m, m, 3);
        for (int level = 2; level < v.levels(); level++) {
            conv(s, neck + level + ".conv_1x1", e, m, 1);
            conv(s, neck + level + ".conv_3x3", m, m, 3);
        }
        String text = "detector.backbone.language_backbone.";
        s.put(text + "encoder.positional_embedding", new int[] {t.contextLength(), t.width()});
        s.put(text + "encoder.text_projection", new int[] {t.width(), t.projectionDim()});
        s.put(text + "encoder.token_embedding.weight", new int[] {t.vocabSize(), t.width()});
        for (int i = 0; i < t.layers(); i++) {
            String r = text + "encoder.transformer.resblocks." + i + ".";
            attention(s, r + "attn", t.width());
            norm(s, r + "ln_1", t.width());
            norm(s, r + "ln_2", t.width());
            linear(s, r + "mlp.c_fc", t.width(), t.mlpHidden());
            linear(s, r + "mlp.c_proj", t.mlpHidden(), t.width());
        }
        norm(s, text + "encoder.ln_final", t.width());
        linear(s, text + "resizer", t.width(), m);
        for (int i = 0; i < d.encoderLayers(); i++) {
            encoderLayer(s, "detector.transformer.encoder.layers." + i + ".", m, d.encoderFfn());
        }
        String dec = "detector.transformer.decoder.";
        for (int i = 0; i < d.decoderLayers(); i++) {
            String l = dec + "layers." + i + ".";
            attention(s, l + "cross_attn", m);
            norm(s, l + "norm1", m);
            attention(s, l + "ca_text", m);
            norm(s, l + "catext_norm", m);
            attention(s, l + "self_attn", m);
            norm(s, l + "norm2", m);
            linear(s, l + "linear1", m, d.decoderFfn());
            linear(s, l + "linear2", d.decoderFfn(), m);
            norm(s, l + "norm3", m);
        }
        norm(s, dec + "norm", m);
        mlp(s, dec + "bbox_embed", m, m, 4, 3);
        s.put(dec + "query_embed.weight", new int[] {d.queries(), m});
        s.put(dec + "reference_points.weight", new int[] {d.queries(), 4});
        mlp(s, dec + "boxRPB_embed_x", 2, m, d.heads(), 2);
        mlp(s, dec + "boxRPB_embed_y", 2, m, d.heads(), 2);
        s.put(dec + "presence_token.weight", new int[] {1, m});
        mlp(s, dec + "presence_token_head", m, m, 1, 3);
        norm(s, dec + "presence_token_out_norm", m);
        mlp(s, dec + "ref_point_head", 2 * m, m, m, 2);
        String geo = "detector.geometry_encoder.";
        s.put(geo + "label_embed.weight", new int[] {2, m});
        s.put(geo + "cls_embed.weight", new int[] {1, m});
        linear(s, geo + "points_direct_project", 2, m);
        linear(s, geo + "points_pool_project", m, m);
        linear(s, geo + "points_pos_enc_project", m, m);
        linear(s, geo + "boxes_direct_project", 4, m);
        conv(s, geo + "boxes_pool_project", m, m, d.roiSize());
        linear(s, geo + "boxes_pos_enc_project", m + 2, m);
        linear(s, geo + "final_proj", m, m);
        norm(s, geo + "norm", m);
        norm(s, geo + "img_pre_norm", m);
        for (int i = 0; i < d.geometryLayers(); i++) {
            encoderLayer(s, geo + "encode." + i + ".", m, d.geometryFfn());
        }
        norm(s, geo + "encode_norm", m);
        String seg = "detector.segmentation_head.";
        for (int i = 0; i < d.pixelDecoderConvs(); i++) {
            conv(s, seg + "pixel_decoder.conv_layers." + i, m, m, 3);
            norm(s, seg + "pixel_decoder.norms." + i, m);
        }
        mlp(s, seg + "mask_predictor.mask_embed", m, m, m, 3);
        attention(s, seg + "cross_attend_prompt", m);
        norm(s, seg + "cross_attn_norm", m);
        conv(s, seg + "semantic_seg_head", m, 1, 1);
        conv(s, seg + "instance_seg_head", m, m, 1);
        String score = "detector.dot_prod_scoring.";
        mlp(s, score + "prompt_mlp", m, d.scoringHidden(), m, 2);
        norm(s, score + "prompt_mlp.out_norm", m);
        linear(s, score + "prompt_proj", m, m);
        linear(s, score + "hs_proj", m, m);
        return s;
    }

    private static void encoderLayer(Map<String, int[]> s, String p, int m, int ffn) {
        attention(s, p + "self_attn", m);
        attention(s, p + "cross_attn_image", m);
        linear(s, p + "linear1", m, ffn);
        linear(s, p + "linear2", ffn, m);
        norm(s, p + "norm1", m);
        norm(s, p + "norm2", m);
        norm(s, p + "norm3", m);
    }

    private static void attention(Map<String, int[]> s, String p, int m) {
        s.put(p + ".in_proj_weight", new int[] {3 * m, m});
        s.put(p + ".in_proj_bias", new int[] {3 * m});
        linear(s, p + ".out_proj", m, m);
    }

    private static void mlp(Map<String, int[]> s, String p, int in, int hidden, int out, int layers) {
        for (int i = 0; i < layers; i++) {
            linear(s, p + ".layers." + i, i == 0 ? in : hidden, i == layers - 1 ? out : hidden);
        }
    }

    private static void linear(Map<String, int[]> s, String p, int in, int out) {
        s.put(p + ".weight", new int[] {out, in});
        s.put(p + ".bias", new int[] {out});
    }

    private static void norm(Map<String, int[]> s, String p, int dim) {
        s.put(p + ".weight", new int[] {dim});
        s.put(p + ".bias", new int[] {dim});
    }

    private static void conv(Map<String, int[]> s, String p, int in, int out, int k) {
        s.put(p + ".weight", new int[] {out, in, k, k});
        s.put(p + ".bias", new int[] {out});
    }

    private static void convT(Map<String, int[]> s, String p, int in, int out) {
        s.put(p + ".weight", new int[] {in, out, 2, 2});
        s.put(p + ".bias", new int[] {out});
    }
}
