package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.CheckpointException;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads a {@link Sam2Config} from the tensor shapes of a SAM 2.1 state_dict (Meta's key names, as in
 * {@code sam2.1_hiera_*.pt}).
 *
 * <p>The shapes tell Hiera's width ({@code patch_embed.proj.weight} [C, 3, 7, 7]), its stages (a block whose
 * {@code proj} exists starts a stage), the hidden and memory widths, the memory attention's depth and
 * feed-forward width, the decoder's MLP and IoU head widths, the mask downsampler's depth and kernel and the
 * fuser's. They do not tell Hiera's heads, its global-attention blocks and window sizes, the input size, or
 * the memory attention's heads: those come from Meta's released configurations, keyed by (width, stages):
 * <pre>
 *   width stages         release    heads  global attention  windows        (input 1024, 1 memory head)
 *   96    [1, 2, 7, 2]   tiny       1      [5, 7, 9]         [8, 4, 14, 7]
 *   96    [1, 2, 11, 2]  small      1      [7, 10, 13]       [8, 4, 14, 7]
 *   112   [2, 3, 16, 3]  base_plus  2      [12, 16, 20]      [8, 4, 14, 7]
 *   144   [2, 6, 36, 4]  large      2      [23, 33, 43]      [8, 4, 16, 8]
 * </pre>
 * Another shape needs its {@link Sam2Config.Layout} passed in; without one the error names the shapes found.
 */
public final class Sam2ConfigInference {
    private Sam2ConfigInference() {}

    public static final List<Released> RELEASES = List.of(
            new Released(96, new int[] {1, 2, 7, 2}, new Sam2Config.Layout("hiera_tiny", 1, new int[] {5, 7, 9},
                    new int[] {8, 4, 14, 7}, 1024, 1)),
            new Released(96, new int[] {1, 2, 11, 2}, new Sam2Config.Layout("hiera_small", 1,
                    new int[] {7, 10, 13}, new int[] {8, 4, 14, 7}, 1024, 1)),
            new Released(112, new int[] {2, 3, 16, 3}, new Sam2Config.Layout("hiera_base_plus", 2,
                    new int[] {12, 16, 20}, new int[] {8, 4, 14, 7}, 1024, 1)),
            new Released(144, new int[] {2, 6, 36, 4}, new Sam2Config.Layout("hiera_large", 2,
                    new int[] {23, 33, 43}, new int[] {8, 4, 16, 8}, 1024, 1)));

    /** One released configuration: the shapes that identify it and the layout they imply. */
    public record Released(int embedDim, int[] stages, Sam2Config.Layout layout) {}

    /** True when the keys are SAM 2's (a Hiera trunk and a memory attention), not SAM's. */
    public static boolean isSam2(StateDict sd) {
        return sd.hasPrefix("image_encoder.trunk.") && sd.hasPrefix("memory_attention.");
    }

    /** Infers the configuration of one of Meta's releases from the shapes. */
    public static Sam2Config infer(StateDict sd) {
        return infer(sd, null);
    }

    /** Infers the configuration; {@code layout} (may be null for a release) gives what shapes do not tell. */
    public static Sam2Config infer(StateDict sd, Sam2Config.Layout layout) {
        return infer(sd, layout, null);
    }

    /**
     * As {@link #infer(StateDict, Sam2Config.Layout)}, {@code layoutFile} naming where {@code layout} came from
     * (null: a release's); the layout is checked against the shapes ({@link Sam2Layouts#check}) before anything
     * else reads it.
     */
    public static Sam2Config infer(StateDict sd, Sam2Config.Layout layout, java.nio.file.Path layoutFile) {
        if (!isSam2(sd)) {
            throw new CheckpointException(sd.source(), "is not a SAM 2 checkpoint: no image_encoder.trunk.* and "
                    + "memory_attention.* keys (" + sd.size() + " tensors"
                    + (sd.hasPrefix("image_encoder.blocks.") ? "; it looks like a SAM (v1) checkpoint)" : ")"));
        }
        Tensor patch = sd.get("image_encoder.trunk.patch_embed.proj.weight");
        if (patch.rank() != 4 || patch.dim(1) != 3 || patch.dim(2) != 7 || patch.dim(3) != 7) {
            throw bad(sd, "image_encoder.trunk.patch_embed.proj.weight has shape " + patch.shapeString()
                    + " where [C, 3, 7, 7] was expected");
        }
        int embedDim = patch.dim(0);
        int depth = sd.countIndexed("image_encoder.trunk.blocks.");
        if (depth == 0) {
            throw bad(sd, "no image_encoder.trunk.blocks.* keys");
        }
        List<Integer> stageList = new ArrayList<>();
        int count = 0;
        for (int i = 0; i < depth; i++) {
            if (i > 0 && sd.contains("image_encoder.trunk.blocks." + i + ".proj.weight")) {
                stageList.add(count);
                count = 0;
            }
            count++;
        }
        stageList.add(count);
        int[] stages = stageList.stream().mapToInt(Integer::intValue).toArray();
        if (stages.length != 4) {
            throw bad(sd, "Hiera has " + stages.length + " stages " + Arrays.toString(stages)
                    + " (from the blocks that change width); SAM 2 uses 4");
        }
        if (layout == null) {
            for (Released r : RELEASES) {
                if (r.embedDim() == embedDim && Arrays.equals(r.stages(), stages)) {
                    layout = r.layout();
                }
            }
            if (layout == null) {
                throw bad(sd, "Hiera width " + embedDim + " with stages " + Arrays.toString(stages)
                        + " is none of Meta's SAM 2.1 releases (tiny 96 [1, 2, 7, 2], small 96 [1, 2, 11, 2], "
                        + "base_plus 112 [2, 3, 16, 3], large 144 [2, 6, 36, 4]); its heads, global-attention "
                        + "blocks and window sizes cannot be read from the shapes");
            }
        }
        int hidden = sd.get("no_mem_embed").dim(-1);
        Sam2Layouts.check(layout, embedDim, stages, hidden, sd.source(), layoutFile);
        Tensor window = sd.get("image_encoder.trunk.pos_embed_window");
        if (!window.hasShape(1, embedDim, layout.windowSpec()[0], layout.windowSpec()[0])) {
            throw bad(sd, "image_encoder.trunk.pos_embed_window has shape " + window.shapeString()
                    + " but the layout " + layout + " has a first window of " + layout.windowSpec()[0]);
        }
        int memDim = sd.get("maskmem_tpos_enc").dim(-1);
        int numMaskmem = sd.get("maskmem_tpos_enc").dim(0);
        int memLayers = sd.countIndexed("memory_attention.layers.");
        int memFfn = sd.get("memory_attention.layers.0.linear1.weight").dim(0);
        int decoderMlp = sd.get("sam_mask_decoder.transformer.layers.0.mlp.layers.0.weight").dim(0);
        int iouHidden = sd.get("sam_mask_decoder.iou_prediction_head.layers.0.weight").dim(0);
        int downsampleLayers = 0;
        while (sd.contains("memory_encoder.mask_downsampler.encoder." + (3 * downsampleLayers) + ".weight")) {
            downsampleLayers++;
        }
        downsampleLayers--; // the last one found is the final 1x1 projection
        if (downsampleLayers < 1) {
            throw bad(sd, "memory_encoder.mask_downsampler has no stride-2 convolutions");
        }
        int downsampleKernel = sd.get("memory_encoder.mask_downsampler.encoder.0.weight").dim(-1);
        int fuserLayers = sd.countIndexed("memory_encoder.fuser.layers.");
        int fuserKernel = sd.get("memory_encoder.fuser.layers.0.dwconv.weight").dim(-1);
        if (hidden % layout.memAttnHeads() != 0 || hidden % memDim != 0) {
            throw bad(sd, "hidden width " + hidden + " is not a multiple of the memory width " + memDim
                    + " and of " + layout.memAttnHeads() + " heads");
        }
        if (layout.imageSize() % 16 != 0 || (1 << downsampleLayers) != 16) {
            throw bad(sd, "input " + layout.imageSize() + " and " + downsampleLayers
                    + " mask downsampling steps do not give stride 16");
        }
        return new Sam2Config(layout.imageSize(), embedDim, stages, hidden, memDim, numMaskmem, memLayers, memFfn,
                decoderMlp, iouHidden, downsampleLayers, downsampleKernel, fuserLayers, fuserKernel, layout);
    }

    private static CheckpointException bad(StateDict sd, String problem) {
        return new CheckpointException(sd.source(), problem);
    }
}
