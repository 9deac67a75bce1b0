package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.Conv2d;
import io.samstream.gpu.cpu.CpuThreadPool;

/**
 * The Hiera trunk ({@code sam2.modeling.backbones.hieradet.Hiera}): a 7x7 stride-4 patch embedding, a position
 * embedding (the background table resized bicubically to the map plus the first window's table tiled over it),
 * then four stages of {@link HieraBlock}s ({@link HieraSchedule}); the output of each stage's last block is kept
 * (strides 4, 8, 16, 32).
 */
final class Hiera {
    private final Sam2Config config;
    private final Conv2d patchEmbed;
    private final float[] posEmbed;
    private final HieraBlock[] blocks;
    private final int[] stageEnds;

    Hiera(StateDict sd, Sam2Config config) {
        this.config = config;
        String p = "image_encoder.trunk.";
        this.patchEmbed = Conv2d.load(sd, p + "patch_embed.proj", 3, config.embedDim(), 7, 4, 3, true);
        this.posEmbed = HieraSchedule.positionEmbedding(sd, config);
        this.stageEnds = config.stageEnds();
        this.blocks = HieraSchedule.blocks(config).stream()
                .map(b -> new HieraBlock(sd, p + "blocks." + b.index() + ".", b.dim(), b.dimOut(), b.heads(),
                        b.window(), b.pool()))
                .toArray(HieraBlock[]::new);
    }

    /** [C, h, w] to [h, w, C]. */
    static float[] channelsLast(float[] x, int c, int h, int w) {
        float[] out = new float[x.length];
        for (int ch = 0; ch < c; ch++) {
            for (int i = 0; i < h * w; i++) {
                out[i * c + ch] = x[ch * h * w + i];
            }
        }
        return out;
    }

    /**
     * The four stage outputs, channels-last, highest resolution first: [S/4]^2 x C, [S/8]^2 x 2C, [S/16]^2 x 4C,
     * [S/32]^2 x 8C, for a channels-last normalized image [S, S, 3].
     */
    float[][] forward(CpuThreadPool pool, float[] image) {
        int s = config.imageSize();
        float[] x = patchEmbed.forward(pool, image, s, s);
        int h = s / 4;
        int w = s / 4;
        for (int i = 0; i < x.length; i++) {
            x[i] += posEmbed[i];
        }
        float[][] outs = new float[stageEnds.length][];
        int stage = 0;
        for (int i = 0; i < blocks.length; i++) {
            x = blocks[i].forward(pool, x, h, w);
            if (blocks[i].pools()) {
                h /= 2;
                w /= 2;
            }
            if (i == stageEnds[stage]) {
                outs[stage++] = x;
            }
        }
        return outs;
    }
}
