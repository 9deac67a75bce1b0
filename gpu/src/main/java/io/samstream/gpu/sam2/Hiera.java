package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.Conv2d;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.tensor.Tensor;
import java.util.Arrays;

/**
 * The Hiera trunk ({@code sam2.modeling.backbones.hieradet.Hiera}): a 7x7 stride-4 patch embedding, a position
 * embedding (the background table resized bicubically to the map plus the first window's table tiled over it),
 * then four stages of {@link HieraBlock}s; the output of each stage's last block is kept (strides 4, 8, 16, 32).
 *
 * <p>Window sizes lag a block behind the stages as in the reference: a stage's first block still uses the
 * previous stage's window (halved by its query pooling). Stages after the first double width and heads.
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
        int c = config.embedDim();
        this.patchEmbed = Conv2d.load(sd, p + "patch_embed.proj", 3, c, 7, 4, 3, true);
        int side = config.imageSize() / 4;
        Tensor bkg = sd.get(p + "pos_embed");
        int w0 = config.layout().windowSpec()[0];
        if (bkg.rank() != 4 || bkg.dim(0) != 1 || bkg.dim(1) != c) {
            throw new IllegalArgumentException("pos_embed " + bkg.shapeString());
        }
        if (side % w0 != 0) {
            throw new IllegalArgumentException("map side " + side + " is not a multiple of the first window " + w0);
        }
        this.posEmbed = positionEmbedding(channelsLast(bkg.data(), c, bkg.dim(2), bkg.dim(3)), bkg.dim(2),
                bkg.dim(3), channelsLast(sd.get(p + "pos_embed_window", 1, c, w0, w0).data(), c, w0, w0), w0, c,
                side);
        this.stageEnds = config.stageEnds();
        int depth = config.depth();
        int[] q = {stageEnds[0] + 1, stageEnds[1] + 1, stageEnds[2] + 1};
        this.blocks = new HieraBlock[depth];
        int dim = c;
        int heads = config.layout().heads();
        int stage = 1;
        int[] global = config.layout().globalAttBlocks();
        for (int i = 0; i < depth; i++) {
            int dimOut = dim;
            int window = config.layout().windowSpec()[stage - 1];
            final int block = i;
            if (Arrays.stream(global).anyMatch(g -> g == block)) {
                window = 0;
            }
            if (i > 0 && Arrays.stream(stageEnds).anyMatch(e -> e == block - 1)) {
                dimOut = dim * 2;
                heads *= 2;
                stage++;
            }
            boolean pool = Arrays.stream(q).anyMatch(b -> b == block);
            blocks[i] = new HieraBlock(sd, p + "blocks." + i + ".", dim, dimOut, heads, window, pool);
            dim = dimOut;
        }
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

    static float[] positionEmbedding(float[] bkg, int bh, int bw, float[] window, int w0, int c, int side) {
        float[] pos = Resampling.bicubic(bkg, bh, bw, c, side, side);
        for (int y = 0; y < side; y++) {
            for (int x = 0; x < side; x++) {
                int src = ((y % w0) * w0 + x % w0) * c;
                int dst = (y * side + x) * c;
                for (int ch = 0; ch < c; ch++) {
                    pos[dst + ch] += window[src + ch];
                }
            }
        }
        return pos;
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
