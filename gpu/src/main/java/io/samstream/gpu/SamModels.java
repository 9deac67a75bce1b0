package io.samstream.gpu;

import io.samstream.config.Device;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuSamBackend;
import io.samstream.gpu.cuda.CudaAvailability;
import io.samstream.gpu.cuda.CudaSamBackend;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.model.SamConfigInference;
import java.nio.file.Path;
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
        StateDict weights = CheckpointLoader.load(checkpoint);
        SamConfig config = SamConfigInference.infer(weights); // logs the inferred shape
        return open(weights, config, device, cpuThreads, maxBatch, CudaAvailability::probe);
    }

    /** {@link #open(Path, Device, int, int)} on loaded weights, with the availability check injectable (tests). */
    static SamBackend open(StateDict weights, SamConfig config, Device device, int cpuThreads, int maxBatch,
                           Supplier<CudaAvailability> probe) {
        return switch (device) {
            case CPU -> cpu(weights, config, cpuThreads);
            case CUDA -> {
                CudaAvailability a = probe.get();
                if (!a.available()) {
                    throw new IllegalStateException("device cuda: " + a.reason() + " (use --device cpu or auto)");
                }
                try {
                    yield cuda(weights, config, cpuThreads, maxBatch);
                } catch (IllegalArgumentException e) {
                    throw new IllegalStateException("device cuda: " + e.getMessage(), e);
                }
            }
            case AUTO -> {
                CudaAvailability a = probe.get();
                if (!a.available()) {
                    log.info("device auto: running on the CPU because {}", a.reason());
                    yield cpu(weights, config, cpuThreads);
                }
                try {
                    SamBackend b = cuda(weights, config, cpuThreads, maxBatch);
                    log.info("device auto: CUDA is usable ({}), running on the GPU", a.reason());
                    yield b;
                } catch (RuntimeException e) {
                    log.warn("device auto: a GPU is usable ({}) but the CUDA backend did not start: {}; running on the CPU",
                            a.reason(), e.getMessage());
                    yield cpu(weights, config, cpuThreads);
                }
            }
        };
    }

    private static SamBackend cuda(StateDict weights, SamConfig config, int threads, int maxBatch) {
        SamBackend backend = new CudaSamBackend(weights, config, maxBatch, threads);
        log.info("device: {}", backend.name());
        return backend;
    }

    private static SamBackend cpu(StateDict weights, SamConfig config, int threads) {
        SamBackend backend = new CpuSamBackend(weights, config, threads);
        log.info("device: {}", backend.name());
        return backend;
    }
}
