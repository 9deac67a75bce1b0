package io.samstream.gpu;

import io.samstream.config.Device;
import io.samstream.config.CudaSettings;
import io.samstream.config.ModelSparsity;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuSamBackend;
import io.samstream.gpu.cuda.CudaAvailability;
import io.samstream.gpu.cuda.CudaSamBackend;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.model.SamConfigInference;
import io.samstream.gpu.sparse.SparseEncoder;
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
        StateDict weights = CheckpointLoader.load(checkpoint);
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
        SamBackend backend = new CudaSamBackend(weights, config, maxBatch, threads,
                CudaSamBackend.DEFAULT_MAX_PROMPT_SETS, sparsity, Math.max(1, ringBatches) * maxBatch, options);
        log.info("device: {}", backend.name());
        return backend;
    }

    private static SamBackend cpu(StateDict weights, SamConfig config, int threads, ModelSparsity sparsity) {
        SamBackend backend = new CpuSamBackend(weights, config, threads,
                sparsity.twoFour() ? "encoder " + sparsity.describe() : "");
        log.info("device: {}", backend.name());
        return backend;
    }
}
