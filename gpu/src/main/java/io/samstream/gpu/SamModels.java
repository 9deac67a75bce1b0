package io.samstream.gpu;

import io.samstream.config.CudaSettings;
import io.samstream.config.Device;
import io.samstream.config.GpuSelection;
import io.samstream.config.ModelSparsity;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuSamBackend;
import io.samstream.gpu.cuda.CudaAvailability;
import io.samstream.gpu.cuda.sam.CudaSamBackend;
import io.samstream.gpu.cuda.sam.CudaSamOptions;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.model.SamConfigInference;
import io.samstream.gpu.sparse.SparseEncoder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens a SAM checkpoint on the requested device: the one entry point the CLI and the engine use.
 *
 * <ul>
 *   <li>{@code cpu}: the fp32 reference backend.</li>
 *   <li>{@code cuda}: {@link CudaSamBackend} (image encoder in bf16 and mask decoder on the GPU), or
 *       an {@link IllegalStateException} naming why CUDA cannot be used ({@link CudaAvailability}'s reason, or
 *       the model shape the kernels do not support) — never a silent fallback.</li>
 *   <li>{@code auto}: CUDA when {@link CudaAvailability#probe()} says a GPU is usable and the backend starts,
 *       else the CPU; the choice and the reason are logged.</li>
 * </ul>
 *
 * <p>With {@link ModelSparsity} 2:4 the chosen encoder Linears are pruned once, here
 * ({@link SparseEncoder#apply}), so every device runs the same sparse model: the CPU on the pruned weights,
 * CUDA on their compressed form with the sparse tensor cores.
 */
public final class SamModels {
    private static final Logger log = LoggerFactory.getLogger(SamModels.class);

    /** Largest encoder batch a CUDA backend opened without an explicit one is sized for. */
    public static final int DEFAULT_MAX_BATCH = 8;

    private SamModels() {}

    public static SamBackend open(Path checkpoint, Device device, int cpuThreads) {
        return open(checkpoint, device, cpuThreads, DEFAULT_MAX_BATCH);
    }

    /**
     * @param cpuThreads threads of the CPU backend (or of the fallback CPU mask decoder under CUDA, for decoders
     *                   the GPU kernels do not support)
     * @param maxBatch   the largest batch of images the encoder will be given (sizes the GPU memory)
     */
    public static SamBackend open(Path checkpoint, Device device, int cpuThreads, int maxBatch) {
        return open(checkpoint, device, cpuThreads, maxBatch, ModelSparsity.NONE);
    }

    /** {@link #open(Path, Device, int, int)} with the encoder's weight sparsity. */
    public static SamBackend open(Path checkpoint, Device device, int cpuThreads, int maxBatch,
                                  ModelSparsity sparsity) {
        return open(checkpoint, device, cpuThreads, maxBatch, sparsity, CudaSamBackend.DEFAULT_RING_BATCHES);
    }

    /**
     * As above, with the CUDA embedding ring sized for {@code ringBatches} batches of {@code maxBatch}: the
     * engine holds at most (in-flight + 1) batches' embeddings, so (in-flight + 2) never makes it wait.
     */
    public static SamBackend open(Path checkpoint, Device device, int cpuThreads, int maxBatch,
                                  ModelSparsity sparsity, int ringBatches) {
        return open(checkpoint, device, cpuThreads, maxBatch, sparsity, ringBatches, CudaSettings.DEFAULTS);
    }

    /** As above, with the CUDA backend's options ({@code samstream.cuda}). */
    public static SamBackend open(Path checkpoint, Device device, int cpuThreads, int maxBatch,
                                  ModelSparsity sparsity, int ringBatches, CudaSettings cuda) {
        return open(CheckpointLoader.load(checkpoint), device, cpuThreads, maxBatch, sparsity, ringBatches, cuda);
    }

    /** As above, on a state_dict already loaded (callers that first ask {@link ModelCheckpoints#family}). */
    public static SamBackend open(StateDict weights, Device device, int cpuThreads, int maxBatch,
                                  ModelSparsity sparsity, int ringBatches, CudaSettings cuda) {
        SamConfig config = SamConfigInference.infer(weights); // logs the inferred shape
        return open(weights, config, device, cpuThreads, maxBatch, sparsity, ringBatches, cuda, CudaAvailability::probe);
    }

    /** {@link #open(Path, Device, int, int)} on loaded weights, with the availability check injectable (tests). */
    static SamBackend open(StateDict weights, SamConfig config, Device device, int cpuThreads, int maxBatch,
                           Supplier<CudaAvailability> probe) {
        return open(weights, config, device, cpuThreads, maxBatch, ModelSparsity.NONE,
                CudaSamBackend.DEFAULT_RING_BATCHES, probe);
    }

    static SamBackend open(StateDict dense, SamConfig config, Device device, int cpuThreads, int maxBatch,
                           ModelSparsity sparsity, int ringBatches, Supplier<CudaAvailability> probe) {
        return open(dense, config, device, cpuThreads, maxBatch, sparsity, ringBatches, CudaSettings.DEFAULTS, probe);
    }

    static SamBackend open(StateDict dense, SamConfig config, Device device, int cpuThreads, int maxBatch,
                           ModelSparsity sparsity, int ringBatches, CudaSettings cuda, Supplier<CudaAvailability> probe) {
        StateDict weights = SparseEncoder.apply(dense, sparsity);
        return switch (device) {
            case CPU -> cpu(weights, config, cpuThreads, sparsity);
            case CUDA -> {
                CudaAvailability a = probe.get();
                if (!a.available()) {
                    throw new IllegalStateException("device cuda: " + a.reason() + " (use --device cpu or auto)");
                }
                try {
                    yield cuda(weights, config, cpuThreads, maxBatch, sparsity, ringBatches, cuda);
                } catch (IllegalArgumentException e) {
                    throw new IllegalStateException("device cuda: " + e.getMessage(), e);
                }
            }
            case AUTO -> {
                CudaAvailability a = probe.get();
                if (!a.available()) {
                    log.info("device auto: running on the CPU because {}", a.reason());
                    yield cpu(weights, config, cpuThreads, sparsity);
                }
                try {
                    SamBackend b = cuda(weights, config, cpuThreads, maxBatch, sparsity, ringBatches, cuda);
                    log.info("device auto: CUDA is usable ({}), running on the GPU", a.reason());
                    yield b;
                } catch (RuntimeException e) {
                    log.warn("device auto: a GPU is usable ({}) but the CUDA backend did not start: {}; running on the CPU",
                            a.reason(), e.getMessage());
                    yield cpu(weights, config, cpuThreads, sparsity);
                }
            }
        };
    }

    private static SamBackend cuda(StateDict weights, SamConfig config, int threads, int maxBatch,
                                   ModelSparsity sparsity, int ringBatches, CudaSettings options) {
        return cuda(weights, config, threads, maxBatch, sparsity, ringBatches, options, 0);
    }

    private static SamBackend cuda(StateDict weights, SamConfig config, int threads, int maxBatch,
                                   ModelSparsity sparsity, int ringBatches, CudaSettings options, int gpu) {
        SamBackend backend = new CudaSamBackend(weights, config,
                CudaSamOptions.builder(maxBatch).decoderThreads(threads).sparsity(sparsity)
                        .embeddingSlots(Math.max(1, ringBatches) * maxBatch).cuda(options).device(gpu).build());
        log.info("device: {}", backend.name());
        return backend;
    }

    /**
     * A backend and where it runs.
     *
     * @param gpu the GPU's ordinal, or {@link #CPU} for the CPU backend
     */
    public record DeviceBackend(int gpu, SamBackend backend) {
        /** The {@code gpu} of the CPU backend. */
        public static final int CPU = -1;

        /** The GPU's ordinal as text, or "cpu": the engine's {@code gpu} metric tag. */
        public String label() {
            return label(gpu);
        }

        /** GPU {@code gpu}'s label: the ordinal as text, or "cpu" for {@link #CPU}. */
        public static String label(int gpu) {
            return gpu == CPU ? "cpu" : Integer.toString(gpu);
        }
    }

    /** The GPU a backend runs on: a CUDA backend's ordinal, {@link DeviceBackend#CPU} for any other. */
    public static int gpuOf(SamBackend backend) {
        return backend instanceof CudaSamBackend c ? c.context().info().ordinal() : DeviceBackend.CPU;
    }

    /** The GPU a SAM 2.1 tracker steps on (the CUDA tracker's ordinal), else {@link DeviceBackend#CPU}. */
    public static int gpuOf(io.samstream.gpu.sam2.Sam2Tracking tracking) {
        return tracking instanceof io.samstream.gpu.cuda.sam2.CudaSam2Tracker c ? c.context().info().ordinal()
                : DeviceBackend.CPU;
    }

    /** What {@link #openAll} asks of the host's GPUs (replaced in tests). */
    interface Gpus {
        /** GPUs visible, 0 without a usable driver or kernels. */
        int count();

        /** Whether GPU {@code ordinal} can run the kernels, and why not. */
        CudaAvailability probe(int ordinal);

        /** The CUDA backend on GPU {@code ordinal}. */
        SamBackend open(StateDict weights, SamConfig config, int threads, int maxBatch, ModelSparsity sparsity,
                        int ringBatches, int ordinal);
    }

    /** The host's GPUs, their backends made with {@code options} ({@code samstream.cuda}). */
    private static Gpus host(CudaSettings options) {
        return new Gpus() {
            @Override
            public int count() {
                return CudaAvailability.deviceCount();
            }

            @Override
            public CudaAvailability probe(int ordinal) {
                return ordinal == 0 ? CudaAvailability.probe() : CudaAvailability.probeDevice(ordinal);
            }

            @Override
            public SamBackend open(StateDict weights, SamConfig config, int threads, int maxBatch,
                                   ModelSparsity sparsity, int ringBatches, int ordinal) {
                return cuda(weights, config, threads, maxBatch, sparsity, ringBatches, options, ordinal);
            }
        };
    }

    /**
     * The engine's backends: on CUDA one per GPU of {@code gpus} ({@code samstream.gpus}), each on its own
     * primary context with its own memory pool and embedding ring, from one load of the checkpoint; on the
     * CPU one backend ({@code gpus} ignored, logged). {@code auto} uses the GPUs that can run the kernels and
     * falls back to the CPU when none can or a backend does not start; {@code cuda} fails instead, naming the
     * GPU and the reason. With {@code all}, GPUs that cannot run the kernels are left out (logged).
     *
     * @throws io.samstream.config.ConfigException naming {@code samstream.gpus} when a listed GPU does not exist
     */
    public static List<DeviceBackend> openAll(Path checkpoint, Device device, GpuSelection gpus, int cpuThreads,
                                              int maxBatch, ModelSparsity sparsity, int ringBatches) {
        return openAll(checkpoint, device, gpus, cpuThreads, maxBatch, sparsity, ringBatches, CudaSettings.DEFAULTS);
    }

    /** As above, with the CUDA backends' options ({@code samstream.cuda}). */
    public static List<DeviceBackend> openAll(Path checkpoint, Device device, GpuSelection gpus, int cpuThreads,
                                              int maxBatch, ModelSparsity sparsity, int ringBatches, CudaSettings cuda) {
        return openAll(CheckpointLoader.load(checkpoint), device, gpus, cpuThreads, maxBatch, sparsity, ringBatches,
                cuda);
    }

    /** As above, on a state_dict already loaded (callers that first ask {@link ModelCheckpoints#family}). */
    public static List<DeviceBackend> openAll(StateDict weights, Device device, GpuSelection gpus, int cpuThreads,
                                              int maxBatch, ModelSparsity sparsity, int ringBatches, CudaSettings cuda) {
        SamConfig config = SamConfigInference.infer(weights);
        return openAll(weights, config, device, gpus, cpuThreads, maxBatch, sparsity, ringBatches, host(cuda));
    }

    static List<DeviceBackend> openAll(StateDict dense, SamConfig config, Device device, GpuSelection gpus,
                                       int cpuThreads, int maxBatch, ModelSparsity sparsity, int ringBatches, Gpus host) {
        StateDict weights = SparseEncoder.apply(dense, sparsity);
        if (device == Device.CPU) {
            return cpuOnly(weights, config, cpuThreads, sparsity, gpus, "device cpu");
        }
        int visible = host.count();
        if (visible == 0) {
            String reason = host.probe(0).reason();
            if (device == Device.CUDA) {
                throw new IllegalStateException("device cuda: " + reason + " (use --device cpu or auto)");
            }
            log.info("device auto: running on the CPU because {}", reason);
            return cpuOnly(weights, config, cpuThreads, sparsity, gpus, "device auto without a usable GPU");
        }
        List<Integer> usable = new ArrayList<>();
        for (int o : gpus.resolve(visible)) {
            CudaAvailability a = host.probe(o);
            if (a.available()) {
                usable.add(o);
            } else if (device == Device.CUDA && !gpus.all()) {
                throw new IllegalStateException("device cuda: samstream.gpus: GPU " + o + ": " + a.reason());
            } else {
                log.warn("samstream.gpus = {}: GPU {} is left out: {}", gpus.describe(), o, a.reason());
            }
        }
        if (usable.isEmpty()) {
            if (device == Device.CUDA) {
                throw new IllegalStateException("device cuda: none of the GPUs of samstream.gpus = " + gpus.describe()
                        + " can run the kernels (see the log)");
            }
            log.info("device auto: running on the CPU because no GPU of samstream.gpus = {} can run the kernels",
                    gpus.describe());
            return cpuOnly(weights, config, cpuThreads, sparsity, gpus, "device auto without a usable GPU");
        }
        List<DeviceBackend> opened = new ArrayList<>(usable.size());
        for (int o : usable) {
            try {
                opened.add(new DeviceBackend(o, host.open(weights, config, cpuThreads, maxBatch, sparsity, ringBatches, o)));
            } catch (RuntimeException e) {
                opened.forEach(b -> b.backend().close());
                if (device == Device.CUDA) {
                    throw new IllegalStateException("device cuda: GPU " + o + ": " + e.getMessage(), e);
                }
                log.warn("device auto: GPU {} is usable but the CUDA backend did not start there: {}; running on the CPU",
                        o, e.getMessage());
                return cpuOnly(weights, config, cpuThreads, sparsity, gpus, "device auto after a GPU failed");
            }
        }
        log.info("running on {} GPU(s): {} (samstream.gpus = {}, {} visible)", opened.size(), usable, gpus.describe(),
                visible);
        return opened;
    }

    private static List<DeviceBackend> cpuOnly(StateDict weights, SamConfig config, int threads, ModelSparsity sparsity,
                                               GpuSelection gpus, String why) {
        log.info("{}: one CPU backend; samstream.gpus = {} does not apply", why, gpus.describe());
        return List.of(new DeviceBackend(DeviceBackend.CPU, cpu(weights, config, threads, sparsity)));
    }

    private static SamBackend cpu(StateDict weights, SamConfig config, int threads, ModelSparsity sparsity) {
        SamBackend backend = new CpuSamBackend(weights, config, threads,
                sparsity.twoFour() ? "encoder " + sparsity.describe() : "");
        log.info("device: {}", backend.name());
        return backend;
    }
}
