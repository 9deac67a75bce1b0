package io.samstream.gpu.sam3.video;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.Conv2d;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.LayerNorm;

/**
 * A binary mask as a dense prompt of the tracker's mask decoder, as {@code Sam3TrackerBase._use_mask_as_output}
 * feeds a detection's mask: the tracker's {@code mask_downsample} (a 4x4 stride-4 convolution, the mask from
 * 16 to 4 x the grid) and the prompt encoder's {@code mask_downscaling} (2x2 stride-2 convolution, LayerNorm2d,
 * GELU, again to {@code maskInChans}, then a 1x1 convolution to the hidden width): [grid², hidden]. SAM 2.1's video
 * path never prompts with masks, so this is the tracker's own part.
 */
final class MaskPrompt {
    private final Conv2d downsample;
    private final Conv2d conv0;
    private final LayerNorm norm1;
    private final Conv2d conv3;
    private final LayerNorm norm4;
    private final Conv2d conv6;
    private final int maskSize;

    /** {@code sd}: the tracker under SAM 2.1's names ({@code Sam3Checkpoint.tracker}). */
    MaskPrompt(StateDict sd, int maskSize, int maskInChans, int hidden) {
        String p = "sam_prompt_encoder.mask_downscaling.";
        this.downsample = Conv2d.load(sd, "mask_downsample", 1, 1, 4, 4, 0, true);
        this.conv0 = Conv2d.load(sd, p + "0", 1, maskInChans / 4, 2, 2, 0, true);
        this.norm1 = LayerNorm.load(sd, p + "1", maskInChans / 4, LayerNorm.LAYER_NORM_2D_EPS);
        this.conv3 = Conv2d.load(sd, p + "3", maskInChans / 4, maskInChans, 2, 2, 0, true);
        this.norm4 = LayerNorm.load(sd, p + "4", maskInChans, LayerNorm.LAYER_NORM_2D_EPS);
        this.conv6 = Conv2d.load(sd, p + "6", maskInChans, hidden, 1, 1, 0, true);
        this.maskSize = maskSize;
    }

    /** The dense embedding [grid², hidden] of a mask [maskSize²] (0/1 values). */
    float[] embed(CpuThreadPool pool, float[] mask) {
        if (mask.length != maskSize * maskSize) {
            throw new IllegalArgumentException("mask of " + mask.length + " values for " + maskSize + " x " + maskSize);
        }
        float[] x = downsample.forward(pool, mask, maskSize, maskSize);
        int s = downsample.outSize(maskSize);
        x = conv0.forward(pool, x, s, s);
        s = conv0.outSize(s);
        norm1.apply(pool, x, s * s, x);
        CpuOps.gelu(pool, x, x.length);
        x = conv3.forward(pool, x, s, s);
        s = conv3.outSize(s);
        norm4.apply(pool, x, s * s, x);
        CpuOps.gelu(pool, x, x.length);
        return conv6.forward(pool, x, s, s);
    }
}
