package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.StateDict;

/**
 * SAM 2's prompt encoder for points (boxes arrive as two corner points labelled 2 and 3, as
 * SAM2VideoPredictor passes them): each point at its pixel centre (+0.5) gets the random-Fourier encoding of
 * its position plus its label's embedding; label -1 (padding) is the not-a-point embedding alone. Without a
 * box argument the reference always appends one padding point. No mask prompt: the dense embedding is
 * {@code no_mask_embed} at every position.
 */
public final class Sam2PromptEncoder {
    private final int dim;
    private final int imageSize;
    private final float[] gaussian;
    private final float[][] labelEmbeddings;
    private final float[] notAPoint;
    private final float[] noMask;
    private final float[] densePe;

    public Sam2PromptEncoder(StateDict sd, Sam2Config config) {
        String p = "sam_prompt_encoder.";
        this.dim = config.hidden();
        this.imageSize = config.imageSize();
        this.gaussian = sd.get(p + "pe_layer.positional_encoding_gaussian_matrix", 2, dim / 2).data().clone();
        this.labelEmbeddings = new float[4][];
        for (int i = 0; i < 4; i++) {
            labelEmbeddings[i] = sd.get(p + "point_embeddings." + i + ".weight", 1, dim).data().clone();
        }
        this.notAPoint = sd.get(p + "not_a_point_embed.weight", 1, dim).data().clone();
        this.noMask = sd.get(p + "no_mask_embed.weight", 1, dim).data().clone();
        int f = config.featureSize();
        this.densePe = new float[f * f * dim];
        for (int y = 0; y < f; y++) {
            for (int x = 0; x < f; x++) {
                encode((x + 1f - 0.5f) / f, (y + 1f - 0.5f) / f, densePe, (y * f + x) * dim);
            }
        }
    }

    /** Random-Fourier features of a point normalized to [0, 1]^2 into out[off, off + dim). */
    private void encode(float x, float y, float[] out, int off) {
        int half = dim / 2;
        float cx = 2 * x - 1;
        float cy = 2 * y - 1;
        float twoPi = (float) (2 * Math.PI);
        for (int j = 0; j < half; j++) {
            float a = twoPi * (cx * gaussian[j] + cy * gaussian[half + j]);
            out[off + j] = (float) Math.sin(a);
            out[off + half + j] = (float) Math.cos(a);
        }
    }

    /**
     * Sparse embeddings [n + 1, dim] of n points (model-input pixels) with labels in {-1, 0, 1, 2, 3}, the
     * trailing padding point included.
     */
    public float[] sparse(float[][] points, int[] labels) {
        int n = points.length;
        float[] out = new float[(n + 1) * dim];
        for (int i = 0; i <= n; i++) {
            int label = i < n ? labels[i] : -1;
            int off = i * dim;
            if (label == -1) {
                System.arraycopy(notAPoint, 0, out, off, dim);
                continue;
            }
            if (label < 0 || label > 3) {
                throw new IllegalArgumentException("point label " + label + " (expected -1, 0, 1, 2 or 3)");
            }
            encode((points[i][0] + 0.5f) / imageSize, (points[i][1] + 0.5f) / imageSize, out, off);
            for (int c = 0; c < dim; c++) {
                out[off + c] += labelEmbeddings[label][c];
            }
        }
        return out;
    }

    /** get_dense_pe(): [f*f, dim]. */
    public float[] densePe() {
        return densePe;
    }

    /** The dense prompt embedding without a mask prompt (one vector for every position). */
    public float[] noMaskEmbedding() {
        return noMask;
    }
}
