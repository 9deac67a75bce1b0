package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.sam2.DeterministicWeights;
import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * State_dicts of Meta's SAM 3 image model (the keys and shapes {@code Sam3Image.state_dict()} has, "detector."
 * prefixed as in sam3.pt) for any configuration, with the fixtures' deterministic weights: what a checkpoint of
 * that shape holds, without a file.
 */
public final class Sam3Weights {
    private Sam3Weights() {}

    /** The small configuration of the unit tests and of the "tiny" fixture (tools/sam3_fixtures). */
    public static final Sam3Config TINY = new Sam3Config(
            new Sam3Config.Vision(112, 14, 48, 4, 2, 222, 4, new int[] {1, 3}, 4, 4),
            new Sam3Config.Text(814, 32, 64, 2, 1, 256, 512),
            new Sam3Config.Detector(32, 4, 2, 64, 2, 64, 20, 1, 64, 7, 3, 64));

    /**
     * The tiny video fixture's tracker (tools/sam3_fixtures/make_sam3_video_fixtures.py): width 32 (the detector's),
     * memory 8 x 7, 2 memory-attention layers of 64, and the mask decoder's fixed 2048-wide MLP and 256-wide IoU
     * head (Meta's _build_sam_heads does not take them).
     */
    public static final Sam3TrackerConfig TINY_TRACKER = new Sam3TrackerConfig(112, 8, 32, 8, 7, 2, 64, 2048, 256, 4,
            3, 2, 7, 16);

    public static StateDict stateDict(Sam3Config c) {
        Map<String, int[]> shapes = shapes(c);
        Map<String, Tensor> map = new LinkedHashMap<>();
        shapes.forEach((name, shape) -> map.put(name, new Tensor(DeterministicWeights.values(name, shape), shape)));
        return new StateDict(Path.of("generated-sam3.pt"), map);
    }

    /** The video model's state_dict (sam3.pt's keys): the detector with its second neck, and the tracker. */
    public static StateDict videoStateDict(Sam3Config c, Sam3TrackerConfig t) {
        Map<String, int[]> shapes = shapes(c);
        shapes.putAll(trackerShapes(c, t));
        Map<String, Tensor> map = new LinkedHashMap<>();
        shapes.forEach((name, shape) -> map.put(name, new Tensor(DeterministicWeights.values(name, shape), shape)));
        return new StateDict(Path.of("generated-sam3-video.pt"), map);
    }

    /** {@link Sam3Shapes#trackerShapes}. */
    public static Map<String, int[]> trackerShapes(Sam3Config c, Sam3TrackerConfig t) {
        return Sam3Shapes.trackerShapes(c, t);
    }

    /** {@link Sam3Shapes#shapes}. */
    static Map<String, int[]> shapes(Sam3Config c) {
        return Sam3Shapes.shapes(c);
    }
}
