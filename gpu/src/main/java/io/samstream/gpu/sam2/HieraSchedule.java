package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What Hiera's blocks are and what its position embedding is, for a configuration: the one place both the CPU
 * trunk ({@link Hiera}) and the CUDA one read them from.
 *
 * <p>Window sizes lag a block behind the stages as in {@code hieradet.Hiera}: a stage's first block still uses the
 * previous stage's window (its queries max-pooled 2x2, so each window shrinks to half its side). Stages after the
 * first double width and heads; a block listed in {@code global_att_blocks} attends over the whole map (window 0).
 */
public final class HieraSchedule {
    private HieraSchedule() {}

    /**
     * One block: input width {@code dim}, output width {@code dimOut} (doubled on a stage's first block, which then
     * also has the {@code proj} shortcut), {@code heads}, {@code window} (0: global), and whether it pools (halves
     * the map).
     */
    public record Block(int index, int stage, int dim, int dimOut, int heads, int window, boolean pool) {
        public int headDim() {
            return dimOut / heads;
        }

        /** Whether the block has the {@code proj} Linear of its shortcut. */
        public boolean projects() {
            return dim != dimOut;
        }
    }

    /** The blocks of the trunk, in order. */
    public static List<Block> blocks(Sam2Config config) {
        int[] stageEnds = config.stageEnds();
        int[] global = config.layout().globalAttBlocks();
        List<Block> out = new ArrayList<>();
        int dim = config.embedDim();
        int heads = config.layout().heads();
        int stage = 1;
        for (int i = 0; i < config.depth(); i++) {
            final int block = i;
            int window = Arrays.stream(global).anyMatch(g -> g == block) ? 0 : config.layout().windowSpec()[stage - 1];
            int dimOut = dim;
            boolean first = i > 0 && Arrays.stream(stageEnds).anyMatch(e -> e == block - 1);
            if (first) {
                dimOut = dim * 2;
                heads *= 2;
                stage++;
            }
            // q_pool = 3 (every release): the first block of stages 2, 3 and 4 pools
            out.add(new Block(i, stage - 1, dim, dimOut, heads, window, first));
            dim = dimOut;
        }
        return out;
    }

    /**
     * The position embedding added after the patch embedding, channels-last {@code [S/4, S/4, C]}: {@code pos_embed}
     * resized bicubically to the map plus {@code pos_embed_window} (the first window's table) tiled over it.
     */
    public static float[] positionEmbedding(StateDict sd, Sam2Config config) {
        String p = "image_encoder.trunk.";
        int c = config.embedDim();
        int side = config.imageSize() / 4;
        int w0 = config.layout().windowSpec()[0];
        Tensor bkg = sd.get(p + "pos_embed");
        if (bkg.rank() != 4 || bkg.dim(0) != 1 || bkg.dim(1) != c) {
            throw new IllegalArgumentException("pos_embed " + bkg.shapeString());
        }
        if (side % w0 != 0) {
            throw new IllegalArgumentException("map side " + side + " is not a multiple of the first window " + w0);
        }
        int bh = bkg.dim(2);
        int bw = bkg.dim(3);
        float[] pos = Resampling.bicubic(Hiera.channelsLast(bkg.data(), c, bh, bw), bh, bw, c, side, side);
        float[] window = Hiera.channelsLast(sd.get(p + "pos_embed_window", 1, c, w0, w0).data(), c, w0, w0);
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
}
