package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.Conv2d;
import io.samstream.gpu.cpu.CpuThreadPool;

/**
 * SAM2Base.forward_image: Hiera trunk, FPN neck, and the mask decoder's {@code conv_s0} / {@code conv_s1} on the
 * two high-resolution levels.
 */
public final class Sam2ImageEncoder {
    private final Sam2Config config;
    private final Hiera trunk;
    private final FpnNeck neck;
    private final Conv2d convS0;
    private final Conv2d convS1;
    private final float[] topPos;

    public Sam2ImageEncoder(StateDict sd, Sam2Config config) {
        this.config = config;
        this.trunk = new Hiera(sd, config);
        this.neck = new FpnNeck(sd, config);
        int c = config.hidden();
        this.convS0 = Conv2d.load(sd, "sam_mask_decoder.conv_s0", c, c / 8, 1, 1, 0, true);
        this.convS1 = Conv2d.load(sd, "sam_mask_decoder.conv_s1", c, c / 4, 1, 1, 0, true);
        int f = config.featureSize();
        this.topPos = PositionEncodings.sine2d(f, f, c);
    }

    /** Features of a normalized image, planar [3, S, S] as the reference's tensor. */
    public FrameFeatures forward(CpuThreadPool pool, float[] planarImage) {
        int s = config.imageSize();
        if (planarImage.length != 3 * s * s) {
            throw new IllegalArgumentException("image of " + planarImage.length + " values for 3 x " + s + " x " + s);
        }
        float[][] levels = neck.forward(pool, trunk.forward(pool, Hiera.channelsLast(planarImage, 3, s, s)));
        int side = s / 4;
        float[] s0 = convS0.forward(pool, levels[0], side, side);
        float[] s1 = convS1.forward(pool, levels[1], side / 2, side / 2);
        return new FrameFeatures(levels[2], topPos, s0, s1, config.featureSize());
    }
}
