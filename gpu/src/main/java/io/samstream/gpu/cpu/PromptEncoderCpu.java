package io.samstream.gpu.cpu;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;

/**
 * SAM's prompt encoder in fp32: points and box corners to sparse embeddings, a mask to a dense embedding,
 * and the dense positional encoding of the embedding grid.
 *
 * <p>Sparse tokens, in order: the points (shifted +0.5 to pixel centres, divided by the input size), then,
 * when there is no box, one padding point with label -1, then the two box corners (+0.5). Label -1 gives
 * not_a_point_embed alone; label 0 adds point_embeddings[0] to the position encoding, label 1 adds
 * point_embeddings[1], any other label leaves the position encoding as is (as the reference does); the
 * corners add point_embeddings[2] and [3]. With neither points nor box there are no sparse tokens.
 */
public final class PromptEncoderCpu {
    private final SamConfig config;
    private final PositionEmbeddingRandom pe;
    private final float[][] pointEmbeddings;
    private final float[] notAPoint;
    private final float[] noMask;
    private final Conv2d down1;
    private final LayerNorm downNorm1;
    private final Conv2d down2;
    private final LayerNorm downNorm2;
    private final Conv2d down3;
    private final float[] densePe;

    PromptEncoderCpu(StateDict sd, SamConfig c) {
        this.config = c;
        int dim = c.promptDim();
        int mi = c.maskInChans();
        String p = "prompt_encoder.";
        this.pe = new PositionEmbeddingRandom(
                sd.get(p + "pe_layer.positional_encoding_gaussian_matrix", 2, dim / 2).data(), dim / 2);
        this.pointEmbeddings = new float[4][];
        for (int i = 0; i < 4; i++) {
            pointEmbeddings[i] = sd.get(p + "point_embeddings." + i + ".weight", 1, dim).data().clone();
        }
        this.notAPoint = sd.get(p + "not_a_point_embed.weight", 1, dim).data().clone();
        this.noMask = sd.get(p + "no_mask_embed.weight", 1, dim).data().clone();
        this.down1 = Conv2d.load(sd, p + "mask_downscaling.0", 1, mi / 4, 2, 2, 0, true);
        this.downNorm1 = LayerNorm.load(sd, p + "mask_downscaling.1", mi / 4, LayerNorm.LAYER_NORM_2D_EPS);
        this.down2 = Conv2d.load(sd, p + "mask_downscaling.3", mi / 4, mi, 2, 2, 0, true);
        this.downNorm2 = LayerNorm.load(sd, p + "mask_downscaling.4", mi, LayerNorm.LAYER_NORM_2D_EPS);
        this.down3 = Conv2d.load(sd, p + "mask_downscaling.6", mi, dim, 1, 1, 0, true);
        this.densePe = pe.dense(c.embeddingSize(), c.embeddingSize());
    }

    /** Number of sparse tokens the prompt encodes to. */
    static int sparseCount(Prompt prompt) {
        int n = 0;
        if (prompt.points() != null) {
            n += prompt.pointCount() + (prompt.hasBox() ? 0 : 1);
        }
        if (prompt.hasBox()) {
            n += 2;
        }
        return n;
    }

    /** Sparse embeddings [n, C], n = {@link #sparseCount}. */
    float[] sparse(Prompt prompt) {
        int dim = config.promptDim();
        float[] out = new float[sparseCount(prompt) * dim];
        float size = config.imageSize();
        int row = 0;
        if (prompt.points() != null) {
            float[][] pts = prompt.points();
            int[] labels = prompt.labels();
            for (int i = 0; i < pts.length; i++) {
                embedPoint(pts[i][0] + 0.5f, pts[i][1] + 0.5f, labels[i], size, out, row++ * dim);
            }
            if (!prompt.hasBox()) {
                embedPoint(0f, 0f, -1, size, out, row++ * dim);
            }
        }
        if (prompt.hasBox()) {
            float[] b = prompt.box();
            pe.encode((b[0] + 0.5f) / size, (b[1] + 0.5f) / size, out, row * dim);
            addTo(out, row++ * dim, pointEmbeddings[2]);
            pe.encode((b[2] + 0.5f) / size, (b[3] + 0.5f) / size, out, row * dim);
            addTo(out, row * dim, pointEmbeddings[3]);
        }
        return out;
    }

    /** Embeds one point whose coordinates are already shifted to the pixel centre. */
    private void embedPoint(float x, float y, int label, float size, float[] out, int off) {
        if (label == -1) {
            System.arraycopy(notAPoint, 0, out, off, notAPoint.length);
            return;
        }
        pe.encode(x / size, y / size, out, off);
        if (label == 0) {
            addTo(out, off, pointEmbeddings[0]);
        } else if (label == 1) {
            addTo(out, off, pointEmbeddings[1]);
        }
    }

    private static void addTo(float[] out, int off, float[] v) {
        for (int i = 0; i < v.length; i++) {
            out[off + i] += v[i];
        }
    }

    /**
     * The dense prompt embedding, channels-last [E*E, C]: the downscaled mask input when there is one,
     * else no_mask_embed at every cell.
     */
    float[] dense(CpuThreadPool pool, Tensor maskInput) {
        int e = config.embeddingSize();
        int dim = config.promptDim();
        if (maskInput == null) {
            float[] out = new float[e * e * dim];
            for (int t = 0; t < e * e; t++) {
                System.arraycopy(noMask, 0, out, t * dim, dim);
            }
            return out;
        }
        int l = config.lowResSize();
        if (!maskInput.hasShape(1, l, l)) {
            throw new IllegalArgumentException("mask input must be [1, " + l + ", " + l + "], got "
                    + maskInput.shapeString());
        }
        // One channel: [1, L, L] is already channels-last [L, L, 1].
        float[] x = down1.forward(pool, maskInput.data(), l, l);
        int h = down1.outSize(l);
        downNorm1.apply(pool, x, h * h, x);
        CpuOps.gelu(pool, x, x.length);
        x = down2.forward(pool, x, h, h);
        h = down2.outSize(h);
        downNorm2.apply(pool, x, h * h, x);
        CpuOps.gelu(pool, x, x.length);
        return down3.forward(pool, x, h, h);
    }

    /** The positional encoding of the embedding grid, channels-last [E*E, C]; shared, do not modify. */
    float[] densePositionalEncoding() {
        return densePe;
    }

    /** Sparse embeddings as a tensor [n, C] (for parity tests and debugging). */
    public Tensor sparseEmbeddings(Prompt prompt) {
        return new Tensor(sparse(prompt), sparseCount(prompt), config.promptDim());
    }

    /** Dense embeddings as the reference returns them, [C, E, E]. */
    public Tensor denseEmbeddings(Prompt prompt) {
        try (CpuThreadPool single = new CpuThreadPool(1)) {
            return channelsFirst(dense(single, prompt.maskInput()));
        }
    }

    /** The dense positional encoding as the reference's {@code get_dense_pe()} without the batch axis, [C, E, E]. */
    public Tensor densePe() {
        return channelsFirst(densePe);
    }

    private Tensor channelsFirst(float[] channelsLast) {
        int e = config.embeddingSize();
        int c = config.promptDim();
        float[] out = new float[c * e * e];
        for (int t = 0; t < e * e; t++) {
            for (int ch = 0; ch < c; ch++) {
                out[ch * e * e + t] = channelsLast[t * c + ch];
            }
        }
        return new Tensor(out, c, e, e);
    }
}
