package io.samstream.gpu.sam2;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.CheckpointException;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.testkit.TestModels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad SAM 2 checkpoints fail with one message naming the file and the problem. */
class Sam2CheckpointErrorsTest {
    private static final Path TINY = Sam2ReferenceParityTest.DIR.resolve("checkpoint.pt");

    @Test
    void truncatedFile(@TempDir Path dir) throws Exception {
        byte[] bytes = Files.readAllBytes(TINY);
        Path cut = dir.resolve("sam2.1_hiera_cut.pt");
        Files.write(cut, java.util.Arrays.copyOf(bytes, bytes.length / 2));
        CheckpointException e = assertThrows(CheckpointException.class,
                () -> Sam2Model.load(cut, Sam2ReferenceParityTest.TINY, 1));
        assertTrue(e.getMessage().startsWith(cut.toString()), e.getMessage());
    }

    @Test
    void notACheckpoint(@TempDir Path dir) throws Exception {
        Path text = dir.resolve("notes.pt");
        Files.writeString(text, "not a checkpoint");
        CheckpointException e = assertThrows(CheckpointException.class, () -> Sam2Model.load(text, 1));
        assertTrue(e.getMessage().startsWith(text.toString()), e.getMessage());
    }

    @Test
    void samV1GivenAsSam2() {
        Path v1 = TestModels.tinySam();
        CheckpointException e = assertThrows(CheckpointException.class, () -> Sam2Model.load(v1, 1));
        assertTrue(e.getMessage().contains("model.pth") && e.getMessage().contains("SAM (v1)"), e.getMessage());
    }

    @Test
    void missingAndMisshapenTensorsAreNamed() {
        StateDict sd = CheckpointLoader.load(TINY);
        Sam2Config config = Sam2ConfigInference.infer(sd, Sam2ReferenceParityTest.TINY);
        Map<String, Tensor> missing = copy(sd);
        missing.remove("memory_encoder.fuser.layers.1.gamma");
        CheckpointException e = assertThrows(CheckpointException.class,
                () -> new Sam2Model(new StateDict(TINY, missing), config, 1));
        assertTrue(e.getMessage().startsWith(TINY + ": missing key memory_encoder.fuser.layers.1.gamma"), e.getMessage());

        Map<String, Tensor> misshapen = copy(sd);
        misshapen.put("obj_ptr_tpos_proj.weight", Tensor.zeros(64, 64));
        e = assertThrows(CheckpointException.class, () -> new Sam2Model(new StateDict(TINY, misshapen), config, 1));
        assertTrue(e.getMessage().contains("obj_ptr_tpos_proj.weight has shape [64, 64] where [32, 64] was expected"),
                e.getMessage());
    }

    private static Map<String, Tensor> copy(StateDict sd) {
        Map<String, Tensor> m = new LinkedHashMap<>();
        for (String k : sd.keys()) {
            m.put(k, sd.get(k));
        }
        return m;
    }
}
