package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.CheckpointException;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The parts of a SAM 3 state_dict. Meta's {@code sam3.pt} holds the video model: the detector (the image model,
 * keys {@code detector.*}) and the tracker ({@code tracker.*}); a state_dict of the image model alone
 * ({@code Sam3Image.state_dict()}) has the detector's keys without the prefix. Both are accepted.
 */
public final class Sam3Checkpoint {
    private Sam3Checkpoint() {}

    static final String DETECTOR = "detector.";
    static final String TRACKER = "tracker.";
    static final String TRUNK = "backbone.vision_backbone.trunk.";

    /** Whether the keys are SAM 3's: a ViT trunk under the vision-language backbone, prefixed or not. */
    public static boolean isSam3(StateDict sd) {
        return sd.hasPrefix(DETECTOR + TRUNK) || sd.hasPrefix(TRUNK);
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
