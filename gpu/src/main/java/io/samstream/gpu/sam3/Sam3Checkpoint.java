package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.CheckpointException;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The parts of a SAM 3 state_dict. Meta's {@code sam3.pt} holds the video model: the detector (the image model,
 * keys {@code detector.*}) and the tracker ({@code tracker.*}); a state_dict of the image model alone
 * ({@code Sam3Image.state_dict()}) has the detector's keys without the prefix. Both are accepted for images; the
 * video path needs the tracker.
 *
 * <p>The tracker is SAM 2's memory design under other names: {@link #tracker} maps them onto SAM 2.1's, so that
 * the SAM 2.1 parts ({@code io.samstream.gpu.sam2}) load it unchanged:
 * <pre>
 *   tracker.maskmem_backbone.*     memory_encoder.*     (SimpleMaskEncoder: the same layers as MemoryEncoder)
 *   tracker.transformer.encoder.*  memory_attention.*   (TransformerEncoderCrossAttention: as MemoryAttention)
 *   tracker.sam_mask_decoder.transformer.layers.N.mlp.lin1 / .lin2
 *                                  sam_mask_decoder.transformer.layers.N.mlp.layers.0 / .layers.1
 *                                  (SAM 3's two-way blocks keep SAM 1's MLPBlock with ReLU: SAM 2.1's 2-layer MLP)
 *   tracker.&lt;anything else&gt;        &lt;anything else&gt;      (sam_prompt_encoder, sam_mask_decoder, obj_ptr_proj,
 *                                                        maskmem_tpos_enc, no_mem_embed, no_obj_ptr, ...)
 * </pre>
 */
public final class Sam3Checkpoint {
    private Sam3Checkpoint() {}

    static final String DETECTOR = "detector.";
    static final String TRACKER = "tracker.";
    static final String TRUNK = "backbone.vision_backbone.trunk.";
    static final String DECODER_BLOCKS = "sam_mask_decoder.transformer.layers.";

    /** Whether the keys are SAM 3's: a ViT trunk under the vision-language backbone, prefixed or not. */
    public static boolean isSam3(StateDict sd) {
        return sd.hasPrefix(DETECTOR + TRUNK) || sd.hasPrefix(TRUNK);
    }

    /** Whether the state_dict holds the tracker (Meta's video model, {@code sam3.pt}). */
    public static boolean hasTracker(StateDict sd) {
        return sd.hasPrefix(TRACKER + "maskmem_backbone.") || sd.hasPrefix(TRACKER + "transformer.encoder.");
    }

    /** The tracker's tensors under SAM 2.1's names (see the class comment). */
    public static StateDict tracker(StateDict sd) {
        if (!hasTracker(sd)) {
            throw new CheckpointException(sd.source(), "has no SAM 3 tracker (" + TRACKER + "maskmem_backbone.*, "
                    + TRACKER + "transformer.encoder.*): " + (isSam3(sd) ? "it is SAM 3's image model; the video "
                    + "path needs the video model's sam3.pt" : "it is not a SAM 3 checkpoint"));
        }
        Map<String, Tensor> map = new LinkedHashMap<>();
        for (String key : sd.keys()) {
            if (key.startsWith(TRACKER)) {
                String name = key.substring(TRACKER.length());
                if (name.startsWith("maskmem_backbone.")) {
                    name = "memory_encoder." + name.substring("maskmem_backbone.".length());
                } else if (name.startsWith("transformer.encoder.")) {
                    name = "memory_attention." + name.substring("transformer.encoder.".length());
                } else if (name.startsWith(DECODER_BLOCKS)) {
                    name = name.replace(".mlp.lin1.", ".mlp.layers.0.").replace(".mlp.lin2.", ".mlp.layers.1.");
                }
                map.put(name, sd.get(key));
            }
        }
        return new StateDict(sd.source(), map);
    }

    /** The detector's tensors under the image model's names (the "detector." prefix removed when present). */
    public static StateDict detector(StateDict sd) {
        if (!isSam3(sd)) {
            throw new CheckpointException(sd.source(), "is not a SAM 3 checkpoint: no " + DETECTOR + TRUNK
                    + "* or " + TRUNK + "* keys (" + sd.size() + " tensors"
                    + (sd.hasPrefix("image_encoder.trunk.") ? "; it looks like a SAM 2 checkpoint)"
                    : sd.hasPrefix("image_encoder.blocks.") ? "; it looks like a SAM (v1) checkpoint)" : ")"));
        }
        if (!sd.hasPrefix(DETECTOR)) {
            return sd;
        }
        Map<String, Tensor> map = new LinkedHashMap<>();
        for (String key : sd.keys()) {
            if (key.startsWith(DETECTOR)) {
                map.put(key.substring(DETECTOR.length()), sd.get(key));
            }
        }
        return new StateDict(sd.source(), map);
    }
}
