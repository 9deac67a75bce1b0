package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.Conv2d;
import io.samstream.gpu.cpu.CpuThreadPool;

/**
 * The FPN neck ({@code FpnNeck}, SAM 2.1 settings): a 1x1 lateral convolution per stage to the hidden width;
 * top-down (nearest 2x upsampling, summed) only into the stride-16 level (fpn_top_down_levels [2, 3]); the
 * stride-32 level is dropped afterwards (scalp 1). Returns the three kept levels, highest resolution first.
 */
final class FpnNeck {
    private final Conv2d[] lateral;
    private final int hidden;
    private final int side;

    FpnNeck(StateDict sd, Sam2Config config) {
        this.hidden = config.hidden();
        this.side = config.imageSize() / 4;
        this.lateral = new Conv2d[4];
        // convs.j works on stage 3 - j (the list runs from the lowest resolution)
        for (int j = 0; j < 4; j++) {
            lateral[j] = Conv2d.load(sd, "image_encoder.neck.convs." + j + ".conv", config.stageDim(3 - j), hidden, 1,
                    1, 0, true);
        }
    }

    float[][] forward(CpuThreadPool pool, float[][] stages) {
        float[][] out = new float[3][];
        int s3 = side >> 3;
        float[] top = lateral[0].forward(pool, stages[3], s3, s3);
        int s2 = side >> 2;
        float[] level2 = lateral[1].forward(pool, stages[2], s2, s2);
        float[] up = Resampling.nearest2x(top, s3, s3, hidden);
        for (int i = 0; i < level2.length; i++) {
            level2[i] += up[i];
        }
        out[2] = level2;
        out[1] = lateral[2].forward(pool, stages[1], side >> 1, side >> 1);
        out[0] = lateral[3].forward(pool, stages[0], side, side);
        return out;
    }
}
