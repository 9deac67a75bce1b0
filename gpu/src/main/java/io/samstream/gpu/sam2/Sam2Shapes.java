package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

/**
 * The tensors of SAM 2.1's model parts as a configuration shapes them (the keys of Meta's state_dict), and random
 * weights in those shapes for benchmarks and the GPU tests' comparisons: matrices N(0, 1/fan-in), LayerNorm weights
 * 1 + N(0, 0.05), the fuser's layer scales and the position tables N(0, 0.5) (so that they matter), the prompt
 * encoder's Fourier matrix N(0, 1), other vectors N(0, 0.02).
 */
public final class Sam2Shapes {
    private Sam2Shapes() {}

    /**
     * A release's configuration by its layout name ({@code hiera_tiny}, {@code hiera_small}, {@code hiera_base_plus},
     * {@code hiera_large}): input 1024, hidden 256, memory 64 x 7, 4 memory-attention layers, as Meta's yaml files.
     */
    public static Sam2Config release(String name) {
        Sam2ConfigInference.Released r = Sam2ConfigInference.RELEASES.stream()
                .filter(x -> x.layout().name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no SAM 2.1 release named " + name));
        return new Sam2Config(1024, r.embedDim(), r.stages(), 256, 64, 7, 4, 2048, 2048, 256, 4, 3, 2, 7, r.layout());
    }

    /** The image encoder's tensors: Hiera trunk, FPN neck, and the mask decoder's conv_s0 / conv_s1. */
    public static Map<String, int[]> imageEncoder(Sam2Config config) {
        Map<String, int[]> t = new LinkedHashMap<>();
        String p = "image_encoder.trunk.";
        int c = config.embedDim();
        int w0 = config.layout().windowSpec()[0];
        t.put(p + "pos_embed", new int[] {1, c, 7, 7});
        t.put(p + "pos_embed_window", new int[] {1, c, w0, w0});
        conv(t, p + "patch_embed.proj", 3, c, 7);
        for (HieraSchedule.Block b : HieraSchedule.blocks(config)) {
            String q = p + "blocks." + b.index() + ".";
            int dim = b.dim(), out = b.dimOut();
            norm(t, q + "norm1", dim);
            linear(t, q + "attn.qkv", dim, 3 * out);
            linear(t, q + "attn.proj", out, out);
            norm(t, q + "norm2", out);
            linear(t, q + "mlp.layers.0", out, 4 * out);
            linear(t, q + "mlp.layers.1", 4 * out, out);
            if (b.projects()) {
                linear(t, q + "proj", dim, out);
            }
        }
        int hidden = config.hidden();
        for (int j = 0; j < 4; j++) {
            conv(t, "image_encoder.neck.convs." + j + ".conv", config.stageDim(3 - j), hidden, 1);
        }
        conv(t, "sam_mask_decoder.conv_s0", hidden, hidden / 8, 1);
        conv(t, "sam_mask_decoder.conv_s1", hidden, hidden / 4, 1);
        return t;
    }

    /** The memory attention's tensors. */
    public static Map<String, int[]> memoryAttention(Sam2Config config) {
        Map<String, int[]> t = new LinkedHashMap<>();
        int d = config.hidden(), m = config.memDim();
        for (int i = 0; i < config.memAttnLayers(); i++) {
            String p = "memory_attention.layers." + i + ".";
            for (String proj : new String[] {"q_proj", "k_proj", "v_proj", "out_proj"}) {
                linear(t, p + "self_attn." + proj, d, d);
                linear(t, p + "cross_attn_image." + proj, proj.equals("k_proj") || proj.equals("v_proj") ? m : d, d);
            }
            linear(t, p + "linear1", d, config.memAttnFfn());
            linear(t, p + "linear2", config.memAttnFfn(), d);
            for (String n : new String[] {"norm1", "norm2", "norm3"}) {
                norm(t, p + n, d);
            }
        }
        norm(t, "memory_attention.norm", d);
        return t;
    }

    /** The memory encoder's tensors and {@code no_obj_embed_spatial}. */
    public static Map<String, int[]> memoryEncoder(Sam2Config config) {
        Map<String, int[]> t = new LinkedHashMap<>();
        String p = "memory_encoder.";
        int in = 1;
        for (int i = 0; i < config.downsampleLayers(); i++) {
            int out = in * 4;
            conv(t, p + "mask_downsampler.encoder." + (3 * i), in, out, config.downsampleKernel());
            norm(t, p + "mask_downsampler.encoder." + (3 * i + 1), out);
            in = out;
        }
        int c = config.hidden();
        conv(t, p + "mask_downsampler.encoder." + (3 * config.downsampleLayers()), in, c, 1);
        conv(t, p + "pix_feat_proj", c, c, 1);
        int k = config.fuserKernel();
        for (int i = 0; i < config.fuserLayers(); i++) {
            String f = p + "fuser.layers." + i + ".";
            t.put(f + "dwconv.weight", new int[] {c, 1, k, k});
            t.put(f + "dwconv.bias", new int[] {c});
            norm(t, f + "norm", c);
            linear(t, f + "pwconv1", c, 4 * c);
            linear(t, f + "pwconv2", 4 * c, c);
            t.put(f + "gamma", new int[] {c});
        }
        conv(t, p + "out_proj", c, config.memDim(), 1);
        t.put("no_obj_embed_spatial", new int[] {1, config.memDim()});
        return t;
    }

    /**
     * The tensors of the SAM heads ({@code SAM2Base._forward_sam_heads}): the prompt encoder (its mask downscaling
     * included, though the heads never get a mask prompt), the mask decoder but its {@code conv_s0} / {@code conv_s1}
     * (in {@link #imageEncoder}), {@code obj_ptr_proj} and {@code no_obj_ptr}.
     */
    public static Map<String, int[]> maskDecoder(Sam2Config config) {
        Map<String, int[]> t = new LinkedHashMap<>();
        int c = config.hidden();
        String pe = "sam_prompt_encoder.";
        t.put(pe + "pe_layer.positional_encoding_gaussian_matrix", new int[] {2, c / 2});
        for (int i = 0; i < 4; i++) {
            t.put(pe + "point_embeddings." + i + ".weight", new int[] {1, c});
        }
        t.put(pe + "not_a_point_embed.weight", new int[] {1, c});
        int mi = 16;   // SAM 2's mask_in_chans
        conv(t, pe + "mask_downscaling.0", 1, mi / 4, 2);
        norm(t, pe + "mask_downscaling.1", mi / 4);
        conv(t, pe + "mask_downscaling.3", mi / 4, mi, 2);
        norm(t, pe + "mask_downscaling.4", mi);
        conv(t, pe + "mask_downscaling.6", mi, c, 1);
        t.put(pe + "no_mask_embed.weight", new int[] {1, c});

        String d = "sam_mask_decoder.";
        for (int i = 0; i < 2; i++) {
            String l = d + "transformer.layers." + i + ".";
            for (String proj : new String[] {"q_proj", "k_proj", "v_proj", "out_proj"}) {
                linear(t, l + "self_attn." + proj, c, c);
            }
            crossAttention(t, l + "cross_attn_token_to_image", c);
            linear(t, l + "mlp.layers.0", c, config.decoderMlp());
            linear(t, l + "mlp.layers.1", config.decoderMlp(), c);
            crossAttention(t, l + "cross_attn_image_to_token", c);
            for (String n : new String[] {"norm1", "norm2", "norm3", "norm4"}) {
                norm(t, l + n, c);
            }
        }
        crossAttention(t, d + "transformer.final_attn_token_to_image", c);
        norm(t, d + "transformer.norm_final_attn", c);
        t.put(d + "iou_token.weight", new int[] {1, c});
        t.put(d + "mask_tokens.weight", new int[] {4, c});
        t.put(d + "obj_score_token.weight", new int[] {1, c});
        t.put(d + "output_upscaling.0.weight", new int[] {c, c / 4, 2, 2});   // ConvTranspose2d: [in, out, k, k]
        t.put(d + "output_upscaling.0.bias", new int[] {c / 4});
        norm(t, d + "output_upscaling.1", c / 4);
        t.put(d + "output_upscaling.3.weight", new int[] {c / 4, c / 8, 2, 2});
        t.put(d + "output_upscaling.3.bias", new int[] {c / 8});
        for (int i = 0; i < 4; i++) {
            mlp(t, d + "output_hypernetworks_mlps." + i, c, c, c / 8);
        }
        mlp(t, d + "iou_prediction_head", c, config.iouHidden(), 4);
        mlp(t, d + "pred_obj_score_head", c, c, 1);
        mlp(t, "obj_ptr_proj", c, c, c);
        t.put("no_obj_ptr", new int[] {1, c});
        return t;
    }

    /**
     * Every tensor {@link Sam2Model} reads: {@link #imageEncoder}, {@link #maskDecoder}, {@link #memoryAttention},
     * {@link #memoryEncoder}, and the memory's temporal encodings and {@code no_mem_embed}.
     */
    public static Map<String, int[]> model(Sam2Config config) {
        Map<String, int[]> t = new LinkedHashMap<>(imageEncoder(config));
        t.putAll(maskDecoder(config));
        t.putAll(memoryAttention(config));
        t.putAll(memoryEncoder(config));
        linear(t, "obj_ptr_tpos_proj", config.hidden(), config.memDim());
        t.put("maskmem_tpos_enc", new int[] {config.numMaskmem(), 1, 1, config.memDim()});
        t.put("no_mem_embed", new int[] {1, 1, config.hidden()});
        return t;
    }

    /** Random weights in {@code shapes} (see the class comment), the same for the same seed. */
    public static StateDict random(Map<String, int[]> shapes, long seed) {
        Random rnd = new Random(seed);
        Map<String, Tensor> t = new LinkedHashMap<>();
        for (Map.Entry<String, int[]> e : shapes.entrySet()) {
            String name = e.getKey();
            int[] shape = e.getValue();
            float[] v = new float[Math.toIntExact(Tensor.numel(shape))];
            double mean = 0, std;
            if (name.endsWith("positional_encoding_gaussian_matrix")) {
                std = 1;   // as Meta initializes it (scale 1): the Fourier features tell positions apart
            } else if (name.endsWith("gamma") || name.contains("pos_embed") || name.startsWith("no_obj")) {
                std = 0.5;
            } else if (shape.length >= 2) {
                std = Math.sqrt((double) shape[0] / v.length);
            } else if (name.endsWith(".weight")) {
                mean = 1;
                std = 0.05;
            } else {
                std = 0.02;
            }
            for (int i = 0; i < v.length; i++) {
                v[i] = (float) (mean + rnd.nextGaussian() * std);
            }
            t.put(name, new Tensor(v, shape));
        }
        return new StateDict(null, t);
    }

    private static void linear(Map<String, int[]> t, String name, int in, int out) {
        t.put(name + ".weight", new int[] {out, in});
        t.put(name + ".bias", new int[] {out});
    }

    private static void conv(Map<String, int[]> t, String name, int in, int out, int k) {
        t.put(name + ".weight", new int[] {out, in, k, k});
        t.put(name + ".bias", new int[] {out});
    }

    /** Meta's {@code Attention} with the decoder's downsampling rate 2: q / k / v to width / 2, out back. */
    private static void crossAttention(Map<String, int[]> t, String name, int width) {
        for (String proj : new String[] {"q_proj", "k_proj", "v_proj"}) {
            linear(t, name + "." + proj, width, width / 2);
        }
        linear(t, name + ".out_proj", width / 2, width);
    }

    /** Meta's 3-layer {@code MLP}. */
    private static void mlp(Map<String, int[]> t, String name, int in, int hidden, int out) {
        linear(t, name + ".layers.0", in, hidden);
        linear(t, name + ".layers.1", hidden, hidden);
        linear(t, name + ".layers.2", hidden, out);
    }

    private static void norm(Map<String, int[]> t, String name, int dim) {
        t.put(name + ".weight", new int[] {dim});
        t.put(name + ".bias", new int[] {dim});
    }
}
