package io.samstream.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.Device;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuSamBackend;
import io.samstream.gpu.cuda.CudaAvailability;
import io.samstream.gpu.model.RandomSamWeights;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import org.junit.jupiter.api.Test;

/** Device selection of {@link SamModels} when CUDA is not usable (the GPU side: CudaParityGpuTest). */
class SamModelsDeviceTest {
    private static final CudaAvailability NO_GPU = new CudaAvailability(false, "no CUDA GPU found (test)", null);

    @Test
    void autoFallsBackToTheCpuWhenCudaIsUnusable() {
        SamConfig c = RandomSamWeights.tinyConfig();
        StateDict w = RandomSamWeights.stateDict(c, 1);
        try (SamBackend b = SamModels.open(w, c, Device.AUTO, 1, 4, () -> NO_GPU)) {
            assertTrue(b instanceof CpuSamBackend, b.name());
        }
    }

    @Test
    void cudaFailsWithTheReasonWhenUnusable() {
        SamConfig c = RandomSamWeights.tinyConfig();
        StateDict w = RandomSamWeights.stateDict(c, 1);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> SamModels.open(w, c, Device.CUDA, 1, 4, () -> NO_GPU));
        assertTrue(e.getMessage().contains("no CUDA GPU found (test)"), e.getMessage());
    }

    @Test
    void cpuNeverAsksForCuda() {
        SamConfig c = RandomSamWeights.tinyConfig();
        StateDict w = RandomSamWeights.stateDict(c, 1);
        try (SamBackend b = SamModels.open(w, c, Device.CPU, 1, 4, () -> {
            throw new AssertionError("probed");
        })) {
            assertEquals(CpuSamBackend.class, b.getClass());
        }
    }
}
