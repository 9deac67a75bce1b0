package io.samstream.gpu;

import io.samstream.config.Device;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuSamBackend;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.model.SamConfigInference;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens a SAM checkpoint on the requested device: the one entry point the CLI and the engine use.
 *
 * <p>This build has the CPU fp32 backend only. {@code auto} therefore runs on the CPU and says so;
 * {@code cuda} fails with a clear message rather than silently running elsewhere.
 */
public final class SamModels {
    private static final Logger log = LoggerFactory.getLogger(SamModels.class);

    private SamModels() {}

    public static SamBackend open(Path checkpoint, Device device, int cpuThreads) {
        StateDict weights = CheckpointLoader.load(checkpoint);
        SamConfig config = SamConfigInference.infer(weights); // logs the inferred shape
        return switch (device) {
            case CPU -> cpu(weights, config, cpuThreads);
            case AUTO -> {
                log.info("device auto: this build has no CUDA backend, running on the CPU");
                yield cpu(weights, config, cpuThreads);
            }
            case CUDA -> throw new UnsupportedOperationException(
                    "device cuda: this build of samstream has no CUDA backend (use --device cpu or auto)");
        };
    }

    private static SamBackend cpu(StateDict weights, SamConfig config, int threads) {
        SamBackend backend = new CpuSamBackend(weights, config, threads);
        log.info("device: {}", backend.name());
        return backend;
    }
}
