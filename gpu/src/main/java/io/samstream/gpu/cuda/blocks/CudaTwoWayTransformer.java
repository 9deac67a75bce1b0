package io.samstream.gpu.cuda.blocks;

import static io.samstream.gpu.cuda.StepMarks.mark;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceWeights.Dense;
import io.samstream.gpu.cuda.DeviceWeights.Norm;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.StepMarks;
import io.samstream.gpu.cuda.kernels.DecoderKernels.Attn;
import io.samstream.gpu.cuda.kernels.DecoderKernels;
import io.samstream.gpu.cuda.kernels.GemmKernels;
import io.samstream.gpu.cuda.kernels.NormKernels;
import io.samstream.gpu.model.SamConfig;

/**
 * The mask decoder's two-way transformer (Meta's {@code TwoWayTransformer}, transformer.py) on the GPU, batched over
 * prompt sets: the tokens (queries, fp32, a few rows per set) attend to the image (keys, bf16, {@code E * E} rows per
 * set) and the image to the tokens, {@code depth} times, then a last tokens-to-image attention.
 *
 * <p>Each layer is a {@code TwoWayAttentionBlock}: self attention of the tokens (the first layer without the positional
 * embedding, replacing the queries), tokens to image, MLP, image to tokens, each followed by its LayerNorm. The token
 * side runs on the small fp32 kernels of decoder_ops.cuh, the image side on the encoder's bf16 GEMM and LayerNorm.
 * SAM 2.1's decoder ({@code CudaSam2MaskDecoder}) has the same transformer: the shape, key prefix and MLP names are
 * the constructor's arguments.
 */
public final class CudaTwoWayTransformer {
    private static final float EPS = 1e-5f;

    /**
     * Meta's {@code Attention} with downsampling, tokens to image: q / out projections fp32 (token side), k / v
     * projections bf16 (image side).
     */
    private record CrossAttn(Dense q, DeviceBuffer kW, DeviceBuffer kB, DeviceBuffer vW, DeviceBuffer vB, Dense o) {}

    /**
     * Meta's {@code TwoWayAttentionBlock}: self attention + norm1, tokens to image + norm2, MLP + norm3, image to
     * tokens (q and out bf16 on the image side, k and v fp32 on the token side) + norm4.
     */
    private record Layer(Dense selfQ, Dense selfK, Dense selfV, Dense selfO, Norm norm1, CrossAttn t2i, Norm norm2,
                         Dense lin1, Dense lin2, Norm norm3, DeviceBuffer i2tQW, DeviceBuffer i2tQB, Dense i2tK,
                         Dense i2tV, DeviceBuffer i2tOW, DeviceBuffer i2tOB, DeviceBuffer norm4G, DeviceBuffer norm4B,
                         boolean skipPe) {}

    /**
     * The mask decoder's buffers the transformer works in: {@code queries} (in: the prompt tokens; out: the tokens),
     * {@code tokens} (the tokens' positional embedding: the prompt tokens), {@code keys} (in: image embedding + dense
     * prompt; out: the image side), {@code densePe} (the image's positional embedding, one image) and scratch.
     */
    public record Workspace(DeviceBuffer queries, DeviceBuffer tokens, DeviceBuffer qtmp, DeviceBuffer qp, DeviceBuffer kp,
                     DeviceBuffer vp, DeviceBuffer attnTok, DeviceBuffer hidden, DeviceBuffer keys, DeviceBuffer keysPe,
                     DeviceBuffer wide, DeviceBuffer densePe) {}

    /**
     * The transformer's shape: token / image width, image tokens per set ({@code E * E}), heads, the cross attentions'
     * downsampling (internal width = width / downsample), MLP width, layers.
     */
    public record Shape(int width, int tokens, int heads, int downsample, int mlp, int depth) {
        /** SAM's, from its configuration. */
        public static Shape of(SamConfig c) {
            return new Shape(c.promptDim(), c.embeddingSize() * c.embeddingSize(), c.decoderHeads(),
                    c.attentionDownsample(), c.decoderMlpDim(), c.decoderDepth());
        }
    }

    /** The names of a layer's two MLP Linears: SAM's {@code mlp.lin1 / lin2}, SAM 2's {@code mlp.layers.0 / 1}. */
    public static final String[] SAM_MLP = {"mlp.lin1", "mlp.lin2"}, SAM2_MLP = {"mlp.layers.0", "mlp.layers.1"};

    private final int c, t, heads, internal, mlp;
    private final String[] mlpNames;
    private final GemmKernels gemm;
    private final NormKernels norm;
    private final DecoderKernels dk;
    private final Layer[] layers;
    private final CrossAttn finalAttn;
    private final Norm finalNorm;

    /**
     * Uploads the weights under {@code prefix} ({@code mask_decoder.transformer.} in SAM, {@code
     * sam_mask_decoder.transformer.} in SAM 2), the layers' MLPs named {@code mlpNames}.
     */
    public CudaTwoWayTransformer(DeviceWeights weights, StateDict sd, String prefix, Shape shape, String[] mlpNames,
                          CudaKernels kernels, DecoderKernels dk) {
        this.c = shape.width();
        this.t = shape.tokens();
        this.heads = shape.heads();
        this.internal = c / shape.downsample();
        this.mlp = shape.mlp();
        this.mlpNames = mlpNames;
        this.gemm = GemmKernels.of(kernels);
        this.norm = NormKernels.of(kernels);
        this.dk = dk;
        layers = new Layer[shape.depth()];
        for (int i = 0; i < layers.length; i++) {
            layers[i] = loadLayer(weights, sd, prefix + "layers." + i + ".", i == 0);
        }
        finalAttn = loadCross(weights, sd, prefix + "final_attn_token_to_image.");
        finalNorm = weights.norm(sd, prefix + "norm_final_attn", c);
    }

    private Layer loadLayer(DeviceWeights w, StateDict sd, String pre, boolean skipPe) {
        String sa = pre + "self_attn.", ia = pre + "cross_attn_image_to_token.";
        return new Layer(w.dense(sd, sa + "q_proj", c, c), w.dense(sd, sa + "k_proj", c, c),
                w.dense(sd, sa + "v_proj", c, c), w.dense(sd, sa + "out_proj", c, c), w.norm(sd, pre + "norm1", c),
                loadCross(w, sd, pre + "cross_attn_token_to_image."), w.norm(sd, pre + "norm2", c),
                w.dense(sd, pre + mlpNames[0], c, mlp), w.dense(sd, pre + mlpNames[1], mlp, c), w.norm(sd, pre + "norm3", c),
                w.bf16(sd.get(ia + "q_proj.weight", internal, c).data(), ia + "q_proj.weight"),
                w.bf16(sd.get(ia + "q_proj.bias", internal).data(), ia + "q_proj.bias"),
                w.dense(sd, ia + "k_proj", c, internal), w.dense(sd, ia + "v_proj", c, internal),
                w.bf16(sd.get(ia + "out_proj.weight", c, internal).data(), ia + "out_proj.weight"),
                w.bf16(sd.get(ia + "out_proj.bias", c).data(), ia + "out_proj.bias"),
                w.bf16(sd.get(pre + "norm4.weight", c).data(), pre + "norm4.weight"),
                w.bf16(sd.get(pre + "norm4.bias", c).data(), pre + "norm4.bias"), skipPe);
    }

    private CrossAttn loadCross(DeviceWeights w, StateDict sd, String pre) {
        return new CrossAttn(w.dense(sd, pre + "q_proj", c, internal),
                w.bf16(sd.get(pre + "k_proj.weight", internal, c).data(), pre + "k_proj.weight"),
                w.bf16(sd.get(pre + "k_proj.bias", internal).data(), pre + "k_proj.bias"),
                w.bf16(sd.get(pre + "v_proj.weight", internal, c).data(), pre + "v_proj.weight"),
                w.bf16(sd.get(pre + "v_proj.bias", internal).data(), pre + "v_proj.bias"),
                w.dense(sd, pre + "out_proj", internal, c));
    }

    /**
     * Queues the transformer for {@code sets} prompt sets of {@code nq} tokens each (their keys in {@code ws.keys}, one
     * image's worth per set): every layer, then the final tokens-to-image attention and its LayerNorm. Marks may be
     * null.
     */
    public void forward(CudaStream stream, Workspace ws, int sets, int nq, StepMarks marks) {
        int rows = sets * nq;
        long img = (long) sets * t;
        DeviceBuffer wideA = ws.wide().slice(0, img * internal * 2, "image q/k");
        DeviceBuffer wideB = ws.wide().slice(img * internal * 2, img * internal * 2, "image v");
        DeviceBuffer wideC = ws.wide().slice(2 * img * internal * 2, img * internal * 2, "image attention out");
        for (Layer ly : layers) {
            selfAttention(stream, ws, ly, sets, nq, rows, marks);
            keysPlusPe(stream, ws, img, marks);
            crossTokenToImage(stream, ws, ly.t2i, sets, nq, rows, wideA, wideB, marks);
            norm(stream, ws, ly.norm2, rows);
            mlp(stream, ws, ly, rows, marks);
            crossImageToToken(stream, ws, ly, sets, nq, rows, img, wideA, wideC, marks);
        }
        keysPlusPe(stream, ws, img, marks);
        crossTokenToImage(stream, ws, finalAttn, sets, nq, rows, wideA, wideB, marks);
        norm(stream, ws, finalNorm, rows);
    }

    /** queries = norm1(queries + self_attn(q = k = queries + tokens, v = queries)); the first layer replaces queries. */
    private void selfAttention(CudaStream stream, Workspace ws, Layer ly, int sets, int nq, int rows, StepMarks marks) {
        DeviceBuffer queries = ws.queries();
        DeviceBuffer qIn = queries;
        if (!ly.skipPe) {
            dk.addF32(stream, queries, ws.tokens(), ws.qtmp(), (long) rows * c);
            qIn = ws.qtmp();
        }
        dk.linear(stream, qIn, c, ly.selfQ.w(), ly.selfQ.b(), null, ws.qp(), c, rows, c, c, false);
        dk.linear(stream, qIn, c, ly.selfK.w(), ly.selfK.b(), null, ws.kp(), c, rows, c, c, false);
        dk.linear(stream, queries, c, ly.selfV.w(), ly.selfV.b(), null, ws.vp(), c, rows, c, c, false);
        dk.attention(stream, Attn.SELF, ws.qp(), c, ws.kp(), c, ws.vp(), c, ws.attnTok(), c, sets, nq, nq, heads,
                c / heads);
        dk.linear(stream, ws.attnTok(), c, ly.selfO.w(), ly.selfO.b(), ly.skipPe ? null : queries, queries, c, rows, c,
                c, false);
        norm(stream, ws, ly.norm1, rows);
        mark(marks, "token self attention");
    }

    /** keysPe = keys + the image's positional embedding (per image). */
    private void keysPlusPe(CudaStream stream, Workspace ws, long img, StepMarks marks) {
        dk.addPeriodicTo(stream, ws.keys(), ws.densePe(), ws.keysPe(), img * c, (long) t * c);
        mark(marks, "keys + pe");
    }

    /** queries += out(attn(q(queries + tokens), k(keys + pe), v(keys))), the tokens-to-image step. */
    private void crossTokenToImage(CudaStream stream, Workspace ws, CrossAttn a, int sets, int nq, int rows,
                                   DeviceBuffer imgK, DeviceBuffer imgV, StepMarks marks) {
        int img = sets * t;
        dk.addF32(stream, ws.queries(), ws.tokens(), ws.qtmp(), (long) rows * c);
        dk.linear(stream, ws.qtmp(), c, a.q.w(), a.q.b(), null, ws.qp(), internal, rows, internal, c, false);
        gemm.run(stream, ws.keysPe(), a.kW, a.kB, null, imgK, img, internal, c, false);
        gemm.run(stream, ws.keys(), a.vW, a.vB, null, imgV, img, internal, c, false);
        mark(marks, "token to image: q + gemm k, v");
        dk.attention(stream, Attn.TOKEN_TO_IMAGE, ws.qp(), internal, imgK, internal, imgV, internal, ws.attnTok(),
                internal, sets, nq, t, heads, internal / heads);
        mark(marks, "token to image: attention");
        dk.linear(stream, ws.attnTok(), internal, a.o.w(), a.o.b(), ws.queries(), ws.queries(), c, rows, c, internal,
                false);
    }

    /** queries = norm3(queries + lin2(ReLU(lin1(queries)))). */
    private void mlp(CudaStream stream, Workspace ws, Layer ly, int rows, StepMarks marks) {
        DeviceBuffer queries = ws.queries();
        dk.linear(stream, queries, c, ly.lin1.w(), ly.lin1.b(), null, ws.hidden(), mlp, rows, mlp, c, true);
        dk.linear(stream, ws.hidden(), mlp, ly.lin2.w(), ly.lin2.b(), queries, queries, c, rows, c, mlp, false);
        norm(stream, ws, ly.norm3, rows);
        mark(marks, "token mlp");
    }

    /**
     * keys = norm4(keys + out(attn(q(keys + pe), k(queries + tokens), v(queries)))), the image-to-tokens step (keys +
     * pe is unchanged since the tokens-to-image step).
     */
    private void crossImageToToken(CudaStream stream, Workspace ws, Layer ly, int sets, int nq, int rows, long img,
                                   DeviceBuffer imgQ, DeviceBuffer imgOut, StepMarks marks) {
        dk.addF32(stream, ws.queries(), ws.tokens(), ws.qtmp(), (long) rows * c);
        dk.linear(stream, ws.qtmp(), c, ly.i2tK.w(), ly.i2tK.b(), null, ws.kp(), internal, rows, internal, c, false);
        dk.linear(stream, ws.queries(), c, ly.i2tV.w(), ly.i2tV.b(), null, ws.vp(), internal, rows, internal, c, false);
        gemm.run(stream, ws.keysPe(), ly.i2tQW, ly.i2tQB, null, imgQ, (int) img, internal, c, false);
        mark(marks, "image to token: gemm q");
        dk.attention(stream, Attn.IMAGE_TO_TOKEN, imgQ, internal, ws.kp(), internal, ws.vp(), internal, imgOut, internal,
                sets, t, nq, heads, internal / heads);
        mark(marks, "image to token: attention");
        gemm.run(stream, imgOut, ly.i2tOW, ly.i2tOB, ws.keys(), ws.keys(), (int) img, c, internal, false);
        norm.layerNorm(stream, ws.keys(), ly.norm4G, ly.norm4B, ws.keys(), (int) img, c, EPS);
        mark(marks, "image to token: gemm out + norm4");
    }

    /** An fp32 LayerNorm of the queries, in place. */
    private void norm(CudaStream stream, Workspace ws, Norm n, int rows) {
        dk.layerNorm(stream, ws.queries(), n.g(), n.b(), ws.queries(), rows, c, EPS);
    }
}
