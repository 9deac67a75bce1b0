package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.Conv2d;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.LayerNorm;

/**
 * The memory encoder ({@code MemoryEncoder}): the mask (already scaled: sigmoid or binarized, x20 - 10) is
 * downsampled by stride-2 convolutions (each with LayerNorm2d and GELU, channels x4) and a 1x1 projection to the
 * hidden width, added to pix_feat_proj(image features), fused by ConvNeXt blocks and projected to the memory
 * width. Its position encoding is the sine encoding of the memory map.
 */
public final class MemoryEncoder {
    private final Conv2d[] down;
    private final LayerNorm[] downNorms;
    private final Conv2d downOut;
    private final Conv2d pixFeatProj;
    private final CxBlock[] fuser;
    private final Conv2d outProj;
    private final int imageSize;
    private final int side;
    private final float[] pos;

    public MemoryEncoder(StateDict sd, Sam2Config config) {
        String p = "memory_encoder.";
        int layers = config.downsampleLayers();
        int k = config.downsampleKernel();
        this.down = new Conv2d[layers];
        this.downNorms = new LayerNorm[layers];
        int in = 1;
        for (int i = 0; i < layers; i++) {
            int out = in * 4;
            down[i] = Conv2d.load(sd, p + "mask_downsampler.encoder." + (3 * i), in, out, k, 2, k / 2, true);
            downNorms[i] = LayerNorm.load(sd, p + "mask_downsampler.encoder." + (3 * i + 1), out,
                    LayerNorm.LAYER_NORM_2D_EPS);
            in = out;
        }
        int c = config.hidden();
        this.downOut = Conv2d.load(sd, p + "mask_downsampler.encoder." + (3 * layers), in, c, 1, 1, 0, true);
        this.pixFeatProj = Conv2d.load(sd, p + "pix_feat_proj", c, c, 1, 1, 0, true);
        this.fuser = new CxBlock[config.fuserLayers()];
        for (int i = 0; i < fuser.length; i++) {
            fuser[i] = new CxBlock(sd, p + "fuser.layers." + i + ".", c, config.fuserKernel());
        }
        this.outProj = Conv2d.load(sd, p + "out_proj", c, config.memDim(), 1, 1, 0, true);
        this.imageSize = config.imageSize();
        this.side = config.featureSize();
        this.pos = PositionEncodings.sine2d(side, side, config.memDim());
    }

    /** The memory position encoding [f*f, memDim] (the same for every frame). */
    float[] positionEncoding() {
        return pos;
    }

    /**
     * The mask input of {@link #encode}: low-resolution logits [l*l] upsampled bilinearly to [S*S], sigmoid (or,
     * for a mask from prompts, binarized), x20 - 10.
     */
    public static float[] scaledMask(float[] lowRes, int l, int s, boolean fromPrompt) {
        float[] high = Resampling.bilinear(lowRes, l, l, s, s);
        for (int i = 0; i < high.length; i++) {
            float v = fromPrompt ? (high[i] > 0 ? 1f : 0f) : Sam2MaskDecoder.sigmoid(high[i]);
            high[i] = v * 20f + -10f;
        }
        return high;
    }

    /** Memory features [f*f, memDim] of image features [f*f, hidden] and a scaled mask [S*S]. */
    public float[] encode(CpuThreadPool pool, float[] pixFeat, float[] scaledMask) {
        float[] m = scaledMask;
        int s = imageSize;
        for (int i = 0; i < down.length; i++) {
            m = down[i].forward(pool, m, s, s);
            s = down[i].outSize(s);
            downNorms[i].apply(pool, m, s * s, m);
            CpuOps.gelu(pool, m, m.length);
        }
        m = downOut.forward(pool, m, s, s);
        if (s != side) {
            throw new IllegalStateException("mask downsampled to " + s + ", features are " + side);
        }
        float[] x = pixFeatProj.forward(pool, pixFeat, side, side);
        CpuOps.addInPlace(pool, x, m, x.length);
        for (CxBlock block : fuser) {
            block.forward(pool, x, side, side);
        }
        return outProj.forward(pool, x, side, side);
    }
}
