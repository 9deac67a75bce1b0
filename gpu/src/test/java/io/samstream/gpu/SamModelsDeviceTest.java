package io.samstream.gpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ConfigException;
import io.samstream.config.Device;
import io.samstream.config.GpuSelection;
import io.samstream.config.ModelSparsity;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuSamBackend;
import io.samstream.gpu.cuda.CudaAvailability;
import io.samstream.gpu.cuda.sam.CudaSamBackend;
import io.samstream.gpu.model.RandomSamWeights;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.sparse.SparseEncoder;
import io.samstream.gpu.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
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
    /** A host of {@code count} GPUs whose {@code broken} ones cannot run the kernels; backends are CPU ones. */
    private static final class FakeGpus implements SamModels.Gpus {
        final int count;
        final Set<Integer> broken;
        final List<Integer> opened = new ArrayList<>();

        FakeGpus(int count, Integer... broken) {
            this.count = count;
            this.broken = Set.of(broken);
        }

        @Override
        public int count() {
            return count;
        }

        @Override
        public CudaAvailability probe(int ordinal) {
            return count == 0 ? NO_GPU : broken.contains(ordinal)
                    ? new CudaAvailability(false, "GPU " + ordinal + " is too old (test)", null)
                    : new CudaAvailability(true, "GPU " + ordinal + " (test)", null);
        }

        @Override
        public SamBackend open(StateDict weights, SamConfig config, int threads, int maxBatch, ModelSparsity sparsity,
                               int ringBatches, int ordinal) {
            opened.add(ordinal);
            return new CpuSamBackend(weights, config, 1);
        }
    }

    private static List<SamModels.DeviceBackend> openAll(Device device, GpuSelection gpus, FakeGpus host) {
        SamConfig c = RandomSamWeights.tinyConfig();
        return SamModels.openAll(RandomSamWeights.stateDict(c, 1), c, device, gpus, 1, 4, ModelSparsity.NONE, 4, host);
    }

    private static List<Integer> gpus(List<SamModels.DeviceBackend> backends) {
        List<Integer> out = backends.stream().map(SamModels.DeviceBackend::gpu).toList();
        backends.forEach(b -> b.backend().close());
        return out;
    }

    @Test
    void oneBackendPerGpuOfTheSelection() {
        FakeGpus host = new FakeGpus(3);
        assertEquals(List.of(0, 1, 2), gpus(openAll(Device.CUDA, GpuSelection.ALL, host)));
        assertEquals(List.of(0, 1, 2), host.opened);
        assertEquals(List.of(2, 0), gpus(openAll(Device.AUTO, GpuSelection.of(2, 0), new FakeGpus(3))));
        List<SamModels.DeviceBackend> one = openAll(Device.CUDA, GpuSelection.of(1), new FakeGpus(2));
        assertEquals("1", one.get(0).label());
        assertEquals(List.of(1), gpus(one));
    }

    @Test
    void aListedGpuBeyondTheVisibleOnesIsAConfigurationError() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> openAll(Device.CUDA, GpuSelection.of(0, 1), new FakeGpus(1)));
        assertTrue(e.getMessage().startsWith("samstream.gpus: GPU 1 does not exist (1 visible"), e.getMessage());
        assertThrows(ConfigException.class, () -> openAll(Device.AUTO, GpuSelection.of(4), new FakeGpus(2)));
    }

    @Test
    void gpusThatCannotRunTheKernels() {
        // all: left out; a listed one under cuda: an error naming it; under auto: left out, the CPU when none is left.
        assertEquals(List.of(0, 2), gpus(openAll(Device.CUDA, GpuSelection.ALL, new FakeGpus(3, 1))));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> openAll(Device.CUDA, GpuSelection.of(0, 1), new FakeGpus(2, 1)));
        assertEquals("device cuda: samstream.gpus: GPU 1: GPU 1 is too old (test)", e.getMessage());
        assertEquals(List.of(0), gpus(openAll(Device.AUTO, GpuSelection.of(0, 1), new FakeGpus(2, 1))));
        assertEquals(List.of(SamModels.DeviceBackend.CPU),
                gpus(openAll(Device.AUTO, GpuSelection.of(1), new FakeGpus(2, 1))));
        assertThrows(IllegalStateException.class, () -> openAll(Device.CUDA, GpuSelection.ALL, new FakeGpus(1, 0)));
    }

    @Test
    void theCpuIsOneBackendWhateverTheGpusSay() {
        FakeGpus none = new FakeGpus(0);
        List<SamModels.DeviceBackend> cpu = openAll(Device.CPU, GpuSelection.of(0, 1), none);
        assertEquals("cpu", cpu.get(0).label());
        assertTrue(cpu.get(0).backend() instanceof CpuSamBackend);
        assertEquals(List.of(SamModels.DeviceBackend.CPU), gpus(cpu));
        assertEquals(List.of(SamModels.DeviceBackend.CPU), gpus(openAll(Device.AUTO, GpuSelection.of(3), none)));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> openAll(Device.CUDA, GpuSelection.ALL, none));
        assertTrue(e.getMessage().contains("no CUDA GPU found (test)"), e.getMessage());
        assertEquals(List.of(), none.opened);
    }
}
