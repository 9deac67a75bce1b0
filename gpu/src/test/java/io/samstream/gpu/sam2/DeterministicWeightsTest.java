package io.samstream.gpu.sam2;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The Java copy of the fixtures' weight formula gives exactly the committed checkpoint's values. */
class DeterministicWeightsTest {
    @Test
    void reproducesTheTinyCheckpoint() throws Exception {
        Path dir = Sam2ReferenceParityTest.DIR;
        StateDict file = CheckpointLoader.load(dir.resolve("checkpoint.pt"));
        StateDict made = DeterministicWeights.fromKeyList(dir.resolve("keys.txt"),
                Map.of("sam_mask_decoder.pred_obj_score_head.layers.2.bias", 0.5f));
        assertEquals(file.keys(), made.keys());
        for (String k : file.keys()) {
            assertArrayEquals(file.get(k).data(), made.get(k).data(), k);
        }
    }
}
