package io.samstream.gpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.Device;
import io.samstream.gpu.checkpoint.CheckpointException;
import io.samstream.gpu.cuda.CudaAvailability;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Model;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.testkit.TestModels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** SAM and SAM 2.1 checkpoints told apart by their keys; SAM 2.1 ones opened, damaged ones refused by name. */
class ModelCheckpointsTest {
    static final Path SAM2_TINY = TestModels.tinySam2();
    static final Path SAM_TINY = TestModels.tinySam();

    /**
     * Without a usable GPU: {@code cuda} is an error that says why, {@code auto} runs SAM 2.1 on the CPU. (On the GPU
     * machine Sam2CudaParityGpuTest runs the GPU parts.)
     */
    @Test
    void sam2OnCudaWithoutAGpuSaysWhyAndAutoUsesTheCpu() {
        CudaAvailability a = CudaAvailability.probe();
        Assumptions.assumeFalse(a.available(), "a GPU is usable here: Sam2CudaParityGpuTest covers it");
        StateDict sd = CheckpointLoader.load(SAM2_TINY);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> ModelCheckpoints.openSam2(sd, 1, Device.CUDA, 0));
        assertTrue(e.getMessage().startsWith("device cuda: ") && e.getMessage().contains(a.reason()), e.getMessage());
        try (Sam2Model m = ModelCheckpoints.openSam2(sd, 1, Device.AUTO, 0)) {
            assertTrue(m.describe().startsWith("CPU"), m.describe());
        }
        // the same for memory mode's tracker
        e = assertThrows(IllegalStateException.class, () -> ModelCheckpoints.openSam2Tracking(sd, 1, Device.CUDA, 0, 4));
        assertTrue(e.getMessage().startsWith("device cuda: ") && e.getMessage().contains(a.reason()), e.getMessage());
        try (io.samstream.gpu.sam2.Sam2Tracking t = ModelCheckpoints.openSam2Tracking(sd, 1, Device.AUTO, 0, 4)) {
            assertTrue(t.describe().startsWith("CPU") && !t.batches(), t.describe());
        }
    }

    @Test
    void familiesAreToldByKeys() {
        assertEquals(ModelCheckpoints.Family.SAM2, ModelCheckpoints.family(CheckpointLoader.load(SAM2_TINY)));
        assertEquals(ModelCheckpoints.Family.SAM, ModelCheckpoints.family(CheckpointLoader.load(SAM_TINY)));
        // SAM 3 (image model or sam3.pt with its tracker, whose SAM 2-like parts must not make it SAM 2.1)
        assertEquals(ModelCheckpoints.Family.SAM3, ModelCheckpoints.family(
                io.samstream.gpu.sam3.Sam3Weights.stateDict(io.samstream.gpu.sam3.Sam3Weights.TINY)));
        assertEquals(ModelCheckpoints.Family.SAM3, ModelCheckpoints.family(io.samstream.gpu.sam3.Sam3Weights
                .videoStateDict(io.samstream.gpu.sam3.Sam3Weights.TINY, io.samstream.gpu.sam3.Sam3Weights.TINY_TRACKER)));
    }

    @Test
    void aSam2CheckpointOpensWithItsLayoutFile() {
        try (Sam2Model m = ModelCheckpoints.openSam2(SAM2_TINY, 1)) {
            Sam2Config c = m.config();
            assertEquals("tiny fixture", c.layout().name());
            assertArrayEquals(new int[] {1, 2, 2, 1}, c.stages());
            assertArrayEquals(new int[] {8, 4, 6, 2}, c.layout().windowSpec());
            assertEquals(128, c.imageSize());
            assertEquals(2, c.layout().memAttnHeads());
        }
    }

    @Test
    void withoutItsLayoutFileTheTinyCheckpointIsRefusedByName(@TempDir Path dir) throws Exception {
        Path copy = dir.resolve("small.pt");
        Files.copy(SAM2_TINY, copy);
        CheckpointException e = assertThrows(CheckpointException.class, () -> ModelCheckpoints.openSam2(copy, 1));
        assertTrue(e.getMessage().startsWith(copy + ": Hiera width 8"), e.getMessage());
    }

    @Test
    void aSam2CheckpointWithoutItsMemoryAttentionIsRefusedByName() {
        StateDict sd = CheckpointLoader.load(SAM2_TINY);
        Map<String, Tensor> cut = new LinkedHashMap<>();
        for (String k : sd.keys()) {
            if (!k.startsWith("memory_attention.")) {
                cut.put(k, sd.get(k));
            }
        }
        StateDict damaged = new StateDict(SAM2_TINY, cut);
        assertEquals(ModelCheckpoints.Family.SAM2, ModelCheckpoints.family(damaged));
        CheckpointException e = assertThrows(CheckpointException.class, () -> ModelCheckpoints.openSam2(damaged, 1));
        assertTrue(e.getMessage().startsWith(SAM2_TINY + ": is not a SAM 2 checkpoint: no image_encoder.trunk.* and "
                + "memory_attention.* keys"), e.getMessage());
    }

    @Test
    void aTruncatedSam2CheckpointIsRefusedByName(@TempDir Path dir) throws Exception {
        byte[] bytes = Files.readAllBytes(SAM2_TINY);
        Path cut = dir.resolve("sam2.1_cut.pt");
        Files.write(cut, Arrays.copyOf(bytes, bytes.length / 2));
        CheckpointException e = assertThrows(CheckpointException.class, () -> ModelCheckpoints.openSam2(cut, 1));
        assertTrue(e.getMessage().startsWith(cut.toString() + ": "), e.getMessage());
    }

    @Test
    void aSamCheckpointIsNotOpenedAsSam2() {
        CheckpointException e = assertThrows(CheckpointException.class, () -> ModelCheckpoints.openSam2(SAM_TINY, 1));
        assertTrue(e.getMessage().startsWith(SAM_TINY + ": is not a SAM 2 checkpoint"), e.getMessage());
    }

    @Test
    void aBadLayoutFileIsRefusedByItsName(@TempDir Path dir) throws Exception {
        Path copy = dir.resolve("small.pt");
        Files.copy(SAM2_TINY, copy);
        Path layout = ModelCheckpoints.layoutFile(copy);
        assertEquals(dir.resolve("small.pt.layout.json"), layout);
        Files.writeString(layout, "{\"heads\": 1, \"global_att_blocks\": [2], \"window_spec\": [8, 4, 6, 2],"
                + " \"image_size\": 128, \"mem_attn_heads\": 2, \"windows\": 3}");
        CheckpointException e = assertThrows(CheckpointException.class, () -> ModelCheckpoints.openSam2(copy, 1));
        assertTrue(e.getMessage().startsWith(layout + ": unknown field \"windows\""), e.getMessage());

        Files.writeString(layout, "{\"heads\": 0, \"global_att_blocks\": [2], \"window_spec\": [8, 4, 6, 2],"
                + " \"image_size\": 128, \"mem_attn_heads\": 2}");
        e = assertThrows(CheckpointException.class, () -> ModelCheckpoints.openSam2(copy, 1));
        assertTrue(e.getMessage().startsWith(layout + ": \"heads\" is 0, at least 1"), e.getMessage());
        Files.writeString(layout, " ".repeat(100_000) + "{}"); // far larger than any layout: not read
        e = assertThrows(CheckpointException.class, () -> ModelCheckpoints.openSam2(copy, 1));
        assertTrue(e.getMessage().startsWith(layout + ": is 100002 bytes, not a SAM 2 layout"), e.getMessage());
    }
}
