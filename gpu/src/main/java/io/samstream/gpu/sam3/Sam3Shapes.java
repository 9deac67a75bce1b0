package io.samstream.gpu.sam3;

import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Shapes;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The tensors of SAM 3's model as a configuration shapes them: the keys and shapes of Meta's {@code sam3.pt}
 * ("detector." and "tracker." prefixed), for tests and benchmarks that need a checkpoint of a given shape without a
 * file (weights: {@link Sam2Shapes#random}, or the fixtures' deterministic formula in the tests).
 */
public final class Sam3Shapes {
    private Sam3Shapes() {}

    /** Every tensor of the detector, "detector." prefixed, in the module order of Meta's model. */
    public static Map<String, int[]> shapes(Sam3Config c) {
        Map<String, int[]> s = new LinkedHashMap<>();
        Sam3Config.Vision v = c.vision();
        Sam3Config.Text t = c.text();
        Sam3Config.Detector d = c.detector();
        int e = v.embedDim();
        int m = d.dModel();
        trunk(s, v, "detector." + VitPositionEmbedding.TRUNK_PREFIX);
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
            encoderLayer(s, "detector." + Sam3Fusion.LAYERS_PREFIX + i + ".", m, d.encoderFfn());
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

    /**
     * The detector's tensors whose keys start with {@code prefix} (e.g. {@link Sam3Decoder#PREFIX}), keyed without
     * sam3.pt's "detector." (as the detector's state_dict holds them): one part's shapes, for random weights.
     */
    public static Map<String, int[]> detectorPart(Sam3Config c, String prefix) {
        Map<String, int[]> part = new LinkedHashMap<>();
        shapes(c).forEach((k, v) -> {
            if (k.startsWith("detector." + prefix)) {
                part.put(k.substring("detector.".length()), v);
            }
        });
        return part;
    }

    /** The ViT trunk's tensors under {@code backbone.vision_backbone.trunk.} (no "detector." prefix). */
    public static Map<String, int[]> trunkShapes(Sam3Config.Vision v) {
        Map<String, int[]> s = new LinkedHashMap<>();
        trunk(s, v, VitPositionEmbedding.TRUNK_PREFIX);
        return s;
    }

    /** The fusion encoder's tensors under {@code transformer.encoder.layers.} (no "detector." prefix). */
    public static Map<String, int[]> fusionShapes(Sam3Config.Detector d) {
        Map<String, int[]> s = new LinkedHashMap<>();
        for (int i = 0; i < d.encoderLayers(); i++) {
            encoderLayer(s, Sam3Fusion.LAYERS_PREFIX + i + ".", d.dModel(), d.encoderFfn());
        }
        return s;
    }

    private static void trunk(Map<String, int[]> s, Sam3Config.Vision v, String trunk) {
        int e = v.embedDim();
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

    /**
     * The second neck ({@code detector.backbone.vision_backbone.sam2_convs.*}) and every {@code tracker.*} tensor:
     * SAM 2.1's shapes ({@link Sam2Shapes}) under the tracker's names.
     */
    public static Map<String, int[]> trackerShapes(Sam3Config c, Sam3TrackerConfig t) {
        Map<String, int[]> s = new LinkedHashMap<>();
        int e = c.vision().embedDim();
        int m = c.detector().dModel();
        String neck = "detector.backbone.vision_backbone.sam2_convs.";
        convT(s, neck + "0.dconv_2x2_0", e, e / 2);
        convT(s, neck + "0.dconv_2x2_1", e / 2, e / 4);
        conv(s, neck + "0.conv_1x1", e / 4, m, 1);
        conv(s, neck + "0.conv_3x3", m, m, 3);
        convT(s, neck + "1.dconv_2x2", e, e / 2);
        conv(s, neck + "1.conv_1x1", e / 2, m, 1);
        conv(s, neck + "1.conv_3x3", m, m, 3);
        for (int level = 2; level < c.vision().levels(); level++) {
            conv(s, neck + level + ".conv_1x1", e, m, 1);
            conv(s, neck + level + ".conv_3x3", m, m, 3);
        }
        Sam2Config parts = t.sam2Parts();
        Map<String, int[]> sam2 = new LinkedHashMap<>(Sam2Shapes.maskDecoder(parts));
        sam2.putAll(Sam2Shapes.memoryAttention(parts));
        sam2.putAll(Sam2Shapes.memoryEncoder(parts));
        int h = t.hidden();
        conv(sam2, "sam_mask_decoder.conv_s0", h, h / 8, 1);
        conv(sam2, "sam_mask_decoder.conv_s1", h, h / 4, 1);
        linear(sam2, "obj_ptr_tpos_proj", h, t.memDim());
        sam2.put("maskmem_tpos_enc", new int[] {t.numMaskmem(), 1, 1, t.memDim()});
        sam2.put("no_mem_embed", new int[] {1, 1, h});
        sam2.put("no_mem_pos_enc", new int[] {1, 1, h});
        conv(sam2, "mask_downsample", 1, 1, 4);
        sam2.forEach((name, shape) -> s.put("tracker." + metaTrackerName(name), shape));
        return s;
    }

    /** A SAM 2.1 name of a tracker part as sam3.pt names it (the inverse of {@link Sam3Checkpoint#tracker}). */
    private static String metaTrackerName(String sam2Name) {
        String name = sam2Name.replace("memory_encoder.", "maskmem_backbone.")
                .replace("memory_attention.", "transformer.encoder.");
        if (name.startsWith(Sam3Checkpoint.DECODER_BLOCKS)) {
            name = name.replace(".mlp.layers.0.", ".mlp.lin1.").replace(".mlp.layers.1.", ".mlp.lin2.");
        }
        return name;
    }

}
