package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.Conv2d;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.LayerNorm;
import io.samstream.gpu.sam2.Resampling;

/**
 * SAM 3's mask head ({@code UniversalSegmentationHead} with its {@code PixelDecoder}): the encoder's memory attends
 * to the prompt (residual, pre-norm); taking the place of the neck's 1x level it is upsampled (nearest, 2x) onto the
 * 2x level and then the 4x one, each sum followed by a 3x3 convolution, GroupNorm(8) and ReLU; a 1x1 convolution
 * gives per-pixel embeddings at 4x the ViT's grid, and each query's mask logits are the dot products of its
 * embedding (a 3-layer MLP of the query, {@link Sam3Model}'s) with them. The CPU reference behind {@link Sam3MaskHead}.
 */
final class MaskHead {
    static final String PREFIX = Sam3MaskHead.PREFIX;
    private static final int GROUPS = Sam3MaskHead.GROUPS;
    /** The query MLP making mask embeddings (the model's, not this seam's). */
    static final String MASK_EMBED = PREFIX + "mask_predictor.mask_embed";

    private final LayerNorm crossNorm;
    private final Attention crossAttend;
    private final Conv2d[] convs = new Conv2d[2];
    private final float[][] normWeight = new float[2][];
    private final float[][] normBias = new float[2][];
    private final Conv2d instanceHead;
    private final int d;

    MaskHead(StateDict sd, Sam3Config.Detector c) {
        this.d = c.dModel();
        this.crossNorm = LayerNorm.load(sd, PREFIX + "cross_attn_norm", d, Sam3Config.NORM_EPS);
        this.crossAttend = Attention.load(sd, PREFIX + "cross_attend_prompt", d, c.heads());
        for (int i = 0; i < 2; i++) {
            convs[i] = Conv2d.load(sd, PREFIX + "pixel_decoder.conv_layers." + i, d, d, 3, 1, 1, true);
            normWeight[i] = sd.get(PREFIX + "pixel_decoder.norms." + i + ".weight", d).data();
            normBias[i] = sd.get(PREFIX + "pixel_decoder.norms." + i + ".bias", d).data();
        }
        if (d % GROUPS != 0) {
            throw new IllegalArgumentException("mask head width " + d + " is not a multiple of " + GROUPS + " groups");
        }
        this.instanceHead = Conv2d.load(sd, PREFIX + "instance_seg_head", d, d, 1, 1, 0, true);
    }

    /** Per-pixel embeddings [(4 grid)², d] of an image and prompt. */
    float[] pixelEmbeddings(CpuThreadPool pool, float[] memory, VisionFeatures image, Prompt prompt) {
        int g = image.grid();
        int tokens = g * g;
        float[] h = crossNorm.apply(pool, memory, tokens);
        float[] x = crossAttend.forward(pool, h, tokens, prompt.rows(), prompt.rows(), prompt.length(), null, false,
                prompt.padding());
        CpuOps.addInPlace(pool, x, memory, tokens * d);
        int side = g;
        for (int i = 0; i < 2; i++) {
            float[] up = Resampling.nearest2x(x, side, side, d);
            side *= 2;
            CpuOps.addInPlace(pool, up, image.level(1 - i).values(), side * side * d);
            x = convs[i].forward(pool, up, side, side);
            groupNorm(x, side * side, normWeight[i], normBias[i]);
            CpuOps.relu(x, x.length);
        }
        return instanceHead.forward(pool, x, side, side);
    }

    /** Mask logits [n, pixels] of mask embeddings e [n, d] over pixel embeddings [pixels, d]. */
    float[] masks(CpuThreadPool pool, float[] e, int n, float[] pixels) {
        int count = pixels.length / d;
        float[] out = new float[n * count];
        pool.forRange(count, 256, (p0, p1) -> {
            for (int p = p0; p < p1; p++) {
                for (int q = 0; q < n; q++) {
                    float dot = 0f;
                    for (int c = 0; c < d; c++) {
                        dot += e[q * d + c] * pixels[p * d + c];
                    }
                    out[q * count + p] = dot;
                }
            }
        });
        return out;
    }

    /** torch's GroupNorm over channels-last x [pixels, d]: statistics per group of d / 8 channels, in double. */
    private void groupNorm(float[] x, int pixels, float[] weight, float[] bias) {
        int per = d / GROUPS;
        for (int g = 0; g < GROUPS; g++) {
            double sum = 0;
            double sq = 0;
            for (int p = 0; p < pixels; p++) {
                for (int c = g * per; c < (g + 1) * per; c++) {
                    double v = x[p * d + c];
                    sum += v;
                    sq += v * v;
                }
            }
            double n = (double) pixels * per;
            double mean = sum / n;
            double var = Math.max(sq / n - mean * mean, 0);
            double inv = 1.0 / Math.sqrt(var + Sam3Config.NORM_EPS);
            for (int p = 0; p < pixels; p++) {
                for (int c = g * per; c < (g + 1) * per; c++) {
                    x[p * d + c] = (float) ((x[p * d + c] - mean) * inv * weight[c] + bias[c]);
                }
            }
        }
    }
}
