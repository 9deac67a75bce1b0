package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.Conv2d;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.LayerNorm;

/**
 * SAM 3's image trunk ({@code vitdet.ViT} as {@code _create_vit_backbone} sets it): a patch embedding without
 * bias, the pretraining grid's absolute position embedding tiled over the map (its class token dropped),
 * {@code ln_pre}, then the blocks; the last block's map is the output (no {@code ln_post}).
 */
final class Vit {
    static final String PREFIX = VitPositionEmbedding.TRUNK_PREFIX;

    private final Conv2d patchEmbed;
    private final float[] posEmbed;
    private final LayerNorm lnPre;
    private final VitBlock[] blocks;
    private final Sam3Config.Vision config;

    Vit(StateDict sd, Sam3Config.Vision v) {
        this.config = v;
        int e = v.embedDim();
        this.patchEmbed = Conv2d.load(sd, PREFIX + "patch_embed.proj", 3, e, v.patchSize(), v.patchSize(), 0,
                false);
        this.posEmbed = VitPositionEmbedding.tiled(sd, v);
        this.lnPre = LayerNorm.load(sd, PREFIX + "ln_pre", e, Sam3Config.NORM_EPS);
        this.blocks = new VitBlock[v.depth()];
        for (int i = 0; i < blocks.length; i++) {
            blocks[i] = new VitBlock(sd, PREFIX + "blocks." + i + ".", v, i);
        }
    }

    /** The map [grid * grid, embed] of a model input, channels-last [size, size, 3]. */
    float[] forward(CpuThreadPool pool, float[] image) {
        int size = config.imageSize();
        if (image.length != size * size * 3) {
            throw new IllegalArgumentException("model input of " + image.length + " values for a " + size + " x "
                    + size + " x 3 input");
        }
        int grid = config.grid();
        float[] x = patchEmbed.forward(pool, image, size, size);
        for (int i = 0; i < x.length; i++) {
            x[i] += posEmbed[i];
        }
        lnPre.apply(pool, x, grid * grid, x);
        for (VitBlock b : blocks) {
            b.forward(pool, x, grid);
        }
        return x;
    }
}
