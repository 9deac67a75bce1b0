package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.Conv2d;
import io.samstream.gpu.cpu.ConvTranspose2x2;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;

/**
 * SAM 3's neck ({@code Sam3DualViTDetNeck}, simple feature pyramid) for the levels the detector keeps: 4x (two
 * 2x2 transposed convolutions with a GELU between), 2x (one), 1x (none), each then a 1x1 convolution to the
 * detector's width and a 3x3 one. The 0.5x level (max pooling) is dropped by the backbone ({@code scalp=1}) and not
 * computed. The video model's checkpoint has a second neck of the same shape ({@code sam2_convs}, {@link
 * Sam3Neck#TRACKER}) whose levels feed the tracker. The CPU reference behind {@link Sam3Neck}.
 */
final class DualNeck {
    private final ConvTranspose2x2 up4a;
    private final ConvTranspose2x2 up4b;
    private final ConvTranspose2x2 up2;
    private final Conv2d[] conv1x1 = new Conv2d[3];
    private final Conv2d[] conv3x3 = new Conv2d[3];

    /** The neck whose weights are under {@code prefix} ({@link Sam3Neck#DETECTOR} or {@link Sam3Neck#TRACKER}). */
    DualNeck(StateDict sd, int embed, int d, String prefix) {
        up4a = ConvTranspose2x2.load(sd, prefix + "0.dconv_2x2_0", embed, embed / 2);
        up4b = ConvTranspose2x2.load(sd, prefix + "0.dconv_2x2_1", embed / 2, embed / 4);
        up2 = ConvTranspose2x2.load(sd, prefix + "1.dconv_2x2", embed, embed / 2);
        int[] in = {embed / 4, embed / 2, embed};
        for (int i = 0; i < 3; i++) {
            conv1x1[i] = Conv2d.load(sd, prefix + i + ".conv_1x1", in[i], d, 1, 1, 0, true);
            conv3x3[i] = Conv2d.load(sd, prefix + i + ".conv_3x3", d, d, 3, 1, 1, true);
        }
    }

    /** The levels [(4 grid)², d], [(2 grid)², d], [grid², d] of the trunk's map [grid², embed]. */
    float[][] forward(CpuThreadPool pool, float[] trunk, int grid) {
        float[] a = up4a.forward(pool, trunk, grid, grid);
        CpuOps.gelu(pool, a, a.length);
        float[] level0 = up4b.forward(pool, a, 2 * grid, 2 * grid);
        float[] level1 = up2.forward(pool, trunk, grid, grid);
        float[][] inputs = {level0, level1, trunk};
        float[][] fpn = new float[3][];
        for (int i = 0; i < 3; i++) {
            int side = grid << (2 - i);
            fpn[i] = conv3x3[i].forward(pool, conv1x1[i].forward(pool, inputs[i], side, side), side, side);
        }
        return fpn;
    }
}
