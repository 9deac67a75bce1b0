package io.samstream.gpu.cuda;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.sam2.HieraSchedule;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2ConfigInference;
import io.samstream.gpu.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

/**
 * Random SAM 2.1 weights at a release's shapes for the CUDA parts' comparisons with the CPU reference, one model part
 * at a time: matrices N(0, 1/fan-in), biases N(0, 0.02), LayerNorm weights 1 + N(0, 0.05).
 */
final class Sam2TestWeights {
    private Sam2TestWeights() {}

    /** A release's configuration (input 1024, hidden 256, memory 64 x 7, 4 memory-attention layers). */
    static Sam2Config release(String name) {
        Sam2ConfigInference.Released r = Sam2ConfigInference.RELEASES.stream()
                .filter(x -> x.layout().name().equals(name)).findFirst().orElseThrow();
        return new Sam2Config(1024, r.embedDim(), r.stages(), 256, 64, 7, 4, 2048, 2048, 256, 4, 3, 2, 7, r.layout());
    }

    /** The image encoder's tensors (trunk, neck, conv_s0 / conv_s1). */
    static StateDict imageEncoder(Sam2Config config, long seed) {
        Random rnd = new Random(seed);
        Map<String, Tensor> t = new LinkedHashMap<>();
        String p = "image_encoder.trunk.";
        int c = config.embedDim();
        put(t, rnd, p + "pos_embed", 0.5, 1, c, 7, 7);
        put(t, rnd, p + "pos_embed_window", 0.5, 1, c, config.layout().windowSpec()[0],
                config.layout().windowSpec()[0]);
        put(t, rnd, p + "patch_embed.proj.weight", Math.sqrt(1.0 / (3 * 49)), c, 3, 7, 7);
        put(t, rnd, p + "patch_embed.proj.bias", 0.02, c);
        for (HieraSchedule.Block b : HieraSchedule.blocks(config)) {
            String q = p + "blocks." + b.index() + ".";
            int dim = b.dim(), out = b.dimOut();
            norm(t, rnd, q + "norm1", dim);
            linear(t, rnd, q + "attn.qkv", dim, 3 * out);
            linear(t, rnd, q + "attn.proj", out, out);
            norm(t, rnd, q + "norm2", out);
            linear(t, rnd, q + "mlp.layers.0", out, 4 * out);
            linear(t, rnd, q + "mlp.layers.1", 4 * out, out);
            if (b.projects()) {
                linear(t, rnd, q + "proj", dim, out);
            }
        }
        int hidden = config.hidden();
        for (int j = 0; j < 4; j++) {
            conv(t, rnd, "image_encoder.neck.convs." + j + ".conv", config.stageDim(3 - j), hidden);
        }
        conv(t, rnd, "sam_mask_decoder.conv_s0", hidden, hidden / 8);
        conv(t, rnd, "sam_mask_decoder.conv_s1", hidden, hidden / 4);
        return new StateDict(null, t);
    }

    private static void linear(Map<String, Tensor> t, Random rnd, String name, int in, int out) {
        put(t, rnd, name + ".weight", Math.sqrt(1.0 / in), out, in);
        put(t, rnd, name + ".bias", 0.02, out);
    }

    private static void conv(Map<String, Tensor> t, Random rnd, String name, int in, int out) {
        put(t, rnd, name + ".weight", Math.sqrt(1.0 / in), out, in, 1, 1);
        put(t, rnd, name + ".bias", 0.02, out);
    }

    private static void norm(Map<String, Tensor> t, Random rnd, String name, int dim) {
        float[] w = new float[dim];
        for (int i = 0; i < dim; i++) {
            w[i] = (float) (1 + rnd.nextGaussian() * 0.05);
        }
        t.put(name + ".weight", new Tensor(w, dim));
        put(t, rnd, name + ".bias", 0.02, dim);
    }

    private static void put(Map<String, Tensor> t, Random rnd, String name, double std, int... shape) {
        float[] v = new float[Math.toIntExact(Tensor.numel(shape))];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) (rnd.nextGaussian() * std);
        }
        t.put(name, new Tensor(v, shape));
    }

    /** The memory attention's tensors. */
    static StateDict memoryAttention(Sam2Config config, long seed) {
        Random rnd = new Random(seed);
        Map<String, Tensor> t = new LinkedHashMap<>();
        int d = config.hidden(), m = config.memDim();
        for (int i = 0; i < config.memAttnLayers(); i++) {
            String p = "memory_attention.layers." + i + ".";
            for (String proj : new String[] {"q_proj", "k_proj", "v_proj", "out_proj"}) {
                linear(t, rnd, p + "self_attn." + proj, d, d);
                linear(t, rnd, p + "cross_attn_image." + proj, proj.equals("k_proj") || proj.equals("v_proj") ? m : d,
                        d);
            }
            linear(t, rnd, p + "linear1", d, config.memAttnFfn());
            linear(t, rnd, p + "linear2", config.memAttnFfn(), d);
            for (String n : new String[] {"norm1", "norm2", "norm3"}) {
                norm(t, rnd, p + n, d);
            }
        }
        norm(t, rnd, "memory_attention.norm", d);
        return new StateDict(null, t);
    }
}
