package io.samstream.gpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.Device;
import io.samstream.config.ModelSparsity;
import io.samstream.gpu.cuda.CudaSamBackend;
import io.samstream.gpu.sparse.SparseEncoder;
import io.samstream.gpu.tensor.Tensor;
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

    @Test
    void cpuRunsThePrunedModelUnderTwoFourSparsity() {
        SamConfig c = RandomSamWeights.tinyConfig();
        StateDict w = RandomSamWeights.stateDict(c, 1);
        ModelSparsity mlp = new ModelSparsity(true, ModelSparsity.Layers.MLP);
        Tensor image = Tensor.zeros(1, 3, c.imageSize(), c.imageSize());
        java.util.Random r = new java.util.Random(3);
        for (int i = 0; i < image.size(); i++) {
            image.data()[i] = (float) r.nextGaussian();
        }
        float[] viaOpen, pruned, dense;
        try (SamBackend b = SamModels.open(w, c, Device.CPU, 1, 4, mlp, CudaSamBackend.DEFAULT_RING_BATCHES, () -> NO_GPU)) {
            assertTrue(b.name().contains("2:4 (encoder MLPs)"), b.name());
            viaOpen = b.encode(image).data();
        }
        try (SamBackend b = new CpuSamBackend(SparseEncoder.apply(w, mlp), c, 1)) {
            pruned = b.encode(image).data();
        }
        try (SamBackend b = new CpuSamBackend(w, c, 1)) {
            dense = b.encode(image).data();
        }
        assertArrayEquals(pruned, viaOpen, 0f);
        assertFalse(java.util.Arrays.equals(dense, viaOpen), "2:4 must change the embedding");
    }
}
