package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.Conv2d;
import io.samstream.gpu.cpu.ConvTranspose2x2;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.sam2.PositionEncodings;

/**
 * SAM 3's neck ({@code Sam3DualViTDetNeck}, simple feature pyramid) for the levels the detector keeps: 4x (two
 * 2x2 transposed convolutions with a GELU between), 2x (one), 1x (none), each then a 1x1 convolution to the
 * detector's width and a 3x3 one. The 0.5x level (max pooling) is dropped by the backbone ({@code scalp=1}) and not
 * computed; the SAM 2-style second neck serves only the tracker's interactive mode.
 */
final class DualNeck {
    static final String PREFIX = "backbone.vision_backbone.convs.";

    private final ConvTranspose2x2 up4a;
    private final ConvTranspose2x2 up4b;
    private final ConvTranspose2x2 up2;
    private final Conv2d[] conv1x1 = new Conv2d[3];
    private final Conv2d[] conv3x3 = new Conv2d[3];
    private final int d;

    DualNeck(StateDict sd, int embed, int d) {
        this.d = d;
        up4a = ConvTranspose2x2.load(sd, PREFIX + "0.dconv_2x2_0", embed, embed / 2);
        up4b = ConvTranspose2x2.load(sd, PREFIX + "0.dconv_2x2_1", embed / 2, embed / 4);
        up2 = ConvTranspose2x2.load(sd, PREFIX + "1.dconv_2x2", embed, embed / 2);
        int[] in = {embed / 4, embed / 2, embed};
        for (int i = 0; i < 3; i++) {
            conv1x1[i] = Conv2d.load(sd, PREFIX + i + ".conv_1x1", in[i], d, 1, 1, 0, true);
            conv3x3[i] = Conv2d.load(sd, PREFIX + i + ".conv_3x3", d, d, 3, 1, 1, true);
        }
    }

    VisionFeatures forward(CpuThreadPool pool, float[] trunk, int grid) {
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
        return new VisionFeatures(grid, trunk, fpn, PositionEncodings.sine2d(grid, grid, d));
    }
}
