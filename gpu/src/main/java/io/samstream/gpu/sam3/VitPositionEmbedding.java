package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;

/**
 * SAM 3's ViT absolute position embedding over the map: the pretraining grid's table ({@code pos_embed}, after a
 * class token that is dropped) tiled over the {@code grid x grid} map, token (y, x) taking (y mod g0, x mod g0).
 * Shared by the CPU reference and the GPU trunk so both add the same table.
 */
public final class VitPositionEmbedding {
    /** The trunk's key prefix in the detector's weights. */
    public static final String TRUNK_PREFIX = "backbone.vision_backbone.trunk.";

    private VitPositionEmbedding() {}

    /** {@code [grid * grid, embed]}, channels-last. */
    public static float[] tiled(StateDict sd, Sam3Config.Vision v) {
        int e = v.embedDim();
        int g0 = v.pretrainGrid();
        float[] pretrained = sd.get(TRUNK_PREFIX + "pos_embed", 1, 1 + g0 * g0, e).data();
        int grid = v.grid();
        float[] out = new float[grid * grid * e];
        for (int y = 0; y < grid; y++) {
            for (int x = 0; x < grid; x++) {
                int src = 1 + (y % g0) * g0 + x % g0;
                System.arraycopy(pretrained, src * e, out, (y * grid + x) * e, e);
            }
        }
        return out;
    }
}
