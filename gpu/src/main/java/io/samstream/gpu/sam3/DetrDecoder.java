package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.LayerNorm;
import io.samstream.gpu.cpu.Mlp;

/**
 * SAM 3's DETR-style decoder ({@code TransformerDecoder}: box refinement, log box bias, presence token, no DAC
 * duplication at inference). Queries start from {@code query_embed} with boxes sigmoid({@code reference_points});
 * each layer takes its query positions from the sine encoding of the current boxes through {@code ref_point_head},
 * its attention bias from them ({@link BoxRelativeBias}), and after it the boxes are refined:
 * sigmoid(bbox_embed(norm(queries)) + inverse_sigmoid(boxes)). The presence logit is the presence token through
 * its norm and head after the last layer. The CPU reference behind {@link Sam3Decoder}.
 */
final class DetrDecoder {
    static final String PREFIX = Sam3Decoder.PREFIX;

    private final float[] queryEmbed;
    private final float[] referencePoints;
    private final float[] presenceToken;
    private final DecoderLayer[] layers;
    private final LayerNorm norm;
    private final Mlp bboxEmbed;
    private final Mlp refPointHead;
    private final Mlp presenceHead;
    private final LayerNorm presenceNorm;
    private final BoxRelativeBias boxBias;
    private final int d;
    private final int queries;

    DetrDecoder(StateDict sd, Sam3Config.Detector c) {
        this.d = c.dModel();
        this.queries = c.queries();
        this.queryEmbed = sd.get(PREFIX + "query_embed.weight", queries, d).data();
        this.referencePoints = sd.get(PREFIX + "reference_points.weight", queries, 4).data();
        this.presenceToken = sd.get(PREFIX + "presence_token.weight", 1, d).data();
        this.layers = new DecoderLayer[c.decoderLayers()];
        for (int i = 0; i < layers.length; i++) {
            layers[i] = new DecoderLayer(sd, PREFIX + "layers." + i + ".", d, c.heads(), c.decoderFfn());
        }
        this.norm = LayerNorm.load(sd, PREFIX + "norm", d, Sam3Config.NORM_EPS);
        this.bboxEmbed = Mlp.load(sd, PREFIX + "bbox_embed", d, d, 4, 3);
        this.refPointHead = Mlp.load(sd, PREFIX + "ref_point_head", 2 * d, d, d, 2);
        this.presenceHead = Mlp.load(sd, PREFIX + "presence_token_head", d, d, 1, 3);
        this.presenceNorm = LayerNorm.load(sd, PREFIX + "presence_token_out_norm", d, Sam3Config.NORM_EPS);
        this.boxBias = new BoxRelativeBias(sd, PREFIX, d, c.heads());
    }

    Sam3Decoder.Output forward(CpuThreadPool pool, float[] memory, float[] memoryPos, int grid, Prompt prompt) {
        int n = queries;
        int tokens = grid * grid;
        float[] x = new float[(n + 1) * d];
        System.arraycopy(presenceToken, 0, x, 0, d);
        System.arraycopy(queryEmbed, 0, x, d, n * d);
        float[] boxes = new float[n * 4];
        for (int i = 0; i < boxes.length; i++) {
            boxes[i] = sigmoid(referencePoints[i]);
        }
        float[] normed = null;
        for (DecoderLayer layer : layers) {
            float[] queryPos = refPointHead.forward(pool, SineEmbedding.boxes(boxes, n, d), n);
            float[] pos = new float[(n + 1) * d];
            System.arraycopy(queryPos, 0, pos, d, n * d);
            float[] bias = boxBias.compute(pool, boxes, n, grid, grid);
            layer.forward(pool, x, n, pos, prompt, memory, memoryPos, tokens, bias);
            float[] q = new float[n * d];
            System.arraycopy(x, d, q, 0, n * d);
            normed = norm.apply(pool, q, n);
            float[] delta = bboxEmbed.forward(pool, normed, n);
            for (int i = 0; i < boxes.length; i++) {
                boxes[i] = sigmoid(delta[i] + inverseSigmoid(boxes[i]));
            }
        }
        float[] presence = new float[d];
        System.arraycopy(x, 0, presence, 0, d);
        float logit = presenceHead.forward(pool, presenceNorm.apply(pool, presence, 1), 1)[0];
        return new Sam3Decoder.Output(normed, boxes, logit);
    }

    static float sigmoid(float v) {
        return (float) (1.0 / (1.0 + Math.exp(-v)));
    }

    /** {@code inverse_sigmoid(x, eps=1e-3)}: log(max(x, eps) / max(1 - x, eps)), x clamped to [0, 1]. */
    static float inverseSigmoid(float x) {
        float c = Math.min(Math.max(x, 0f), 1f);
        float a = Math.max(c, 1e-3f);
        float b = Math.max(1f - c, 1e-3f);
        return (float) Math.log(a / b);
    }
}
