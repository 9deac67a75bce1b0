package io.samstream.stream.engine;

import io.samstream.gpu.checkpoint.CheckpointWriter;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3Shapes;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.testkit.FixtureWeights;
import io.samstream.testkit.TestModels;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A tiny SAM 3 video checkpoint for the engine's tests: the official key layout of {@code sam3.pt} (detector and
 * tracker, "detector." and "tracker." prefixed, {@link Sam3Shapes}) at the tiny configuration of gpu's SAM 3 tests
 * and fixtures, with their deterministic random weights ({@link FixtureWeights}), written as safetensors next to the test
 * BPE vocabulary of gpu's fixtures under the name {@link Sam3Tokenizer#VOCABULARY_FILE}; the tracker's object-score
 * head is biased towards "visible" so that the tracker shows what it follows. Random weights: it shows the engine's
 * mechanics (ids, concepts, records), never useful masks. About 4.9 MB of fp32 (the tracker's fixed-width mask
 * decoder MLP and mask downsampler are most of it), written at test time and never committed.
 */
public final class TinySam3Checkpoint {
    /** gpu's tiny SAM 3 (Sam3Weights.TINY): ViT 48 x 4 at 112 pixels, text 64 x 2, detector 32 wide, 20 queries. */
    static final Sam3Config TINY = new Sam3Config(
            new Sam3Config.Vision(112, 14, 48, 4, 2, 222, 4, new int[] {1, 3}, 4, 4),
            new Sam3Config.Text(814, 32, 64, 2, 1, 256, 512),
            new Sam3Config.Detector(32, 4, 2, 64, 2, 64, 20, 1, 64, 7, 3, 64));
    /** Its tracker (Sam3Weights.TINY_TRACKER). */
    static final Sam3TrackerConfig TINY_TRACKER = new Sam3TrackerConfig(112, 8, 32, 8, 7, 2, 64, 2048, 256, 4, 3, 2,
            7, 16);

    /** The tracker's object-score head's last bias: biased towards "the object is there", as the tiny SAM 2.1's. */
    static final String OBJECT_SCORE_BIAS = "tracker.sam_mask_decoder.pred_obj_score_head.layers.2.bias";

    private TinySam3Checkpoint() {}

    /** Writes {@code sam3-tiny.safetensors} and its vocabulary into {@code dir}; returns the checkpoint. */
    public static Path write(Path dir) throws IOException {
        Map<String, int[]> shapes = Sam3Shapes.shapes(TINY);
        shapes.putAll(Sam3Shapes.trackerShapes(TINY, TINY_TRACKER));
        Map<String, Tensor> map = new LinkedHashMap<>();
        shapes.forEach((name, shape) -> map.put(name, new Tensor(FixtureWeights.values(name, shape), shape)));
        // Visible: the random tracker then shows the objects it follows (a logit of about 4: probability 0.98).
        java.util.Arrays.fill(map.get(OBJECT_SCORE_BIAS).data(), 4f);
        Path file = dir.resolve("sam3-tiny.safetensors");
        CheckpointWriter.writeSafetensors(new StateDict(file, map), file, "tiny random SAM 3 for tests");
        Files.copy(TestModels.tinySam3Vocabulary(),
                dir.resolve(Sam3Tokenizer.VOCABULARY_FILE));
        return file;
    }
}
