package io.samstream.stream.app;

import io.samstream.config.ConfigException;
import io.samstream.config.SamstreamConfig;
import io.samstream.config.TrackingMode;
import io.samstream.gpu.ModelCheckpoints;
import java.nio.file.Path;

/**
 * The tracking a checkpoint's model gets: {@code samstream.tracking.mode} against the model family, checked
 * before the model loads. A SAM 3 checkpoint tracks concepts (tracking on, no discovery, no 2:4 sparsity); a SAM 2.1
 * checkpoint runs in memory mode (tracking on, no discovery, no 2:4 sparsity); SAM in kalman mode (or with tracking off, fixed prompts). A mode the model cannot run is a
 * {@link ConfigException} naming the key and the checkpoint.
 */
final class TrackingModes {
    private TrackingModes() {}

    /** MEMORY, KALMAN or CONCEPT: the mode the engine runs. */
    static TrackingMode resolve(SamstreamConfig config, ModelCheckpoints.Family family, Path checkpoint) {
        TrackingMode mode = config.tracking().mode();
        if (family == ModelCheckpoints.Family.SAM3) {
            return sam3(config, mode, checkpoint);
        }
        if (mode == TrackingMode.CONCEPT) {
            throw new ConfigException("samstream.tracking.mode = concept needs a SAM 3 checkpoint (sam3.pt); "
                    + checkpoint + " is a " + family.label() + " checkpoint (use auto)");
        }
        if (family == ModelCheckpoints.Family.SAM) {
            if (mode == TrackingMode.MEMORY) {
                throw new ConfigException("samstream.tracking.mode = memory needs a SAM 2.1 checkpoint; "
                        + checkpoint + " is a SAM checkpoint (use kalman or auto)");
            }
            return TrackingMode.KALMAN;
        }
        String sam2 = checkpoint + " is a SAM 2.1 checkpoint";
        if (mode == TrackingMode.KALMAN) {
            throw new ConfigException("samstream.tracking.mode = kalman needs a SAM checkpoint; " + sam2
                    + " (use memory or auto)");
        }
        if (!config.tracking().enabled()) {
            throw new ConfigException("samstream.tracking.enabled = off: " + sam2
                    + ", which the engine runs in memory mode only (turn tracking on)");
        }
        if (config.discovery().enabled()) {
            throw new ConfigException("samstream.discovery.enabled = on: automatic discovery needs SAM; " + sam2);
        }
        if (config.sparsity().twoFour()) {
            throw new ConfigException("samstream.model.sparsity = " + config.sparsity().describe()
                    + ": 2:4 sparsity applies to SAM's encoder only; " + sam2);
        }
        return TrackingMode.MEMORY;
    }

    private static TrackingMode sam3(SamstreamConfig config, TrackingMode mode, Path checkpoint) {
        String sam3 = checkpoint + " is a SAM 3 checkpoint";
        if (mode == TrackingMode.KALMAN || mode == TrackingMode.MEMORY) {
            throw new ConfigException("samstream.tracking.mode = " + mode.configName() + ": " + sam3
                    + ", which the engine runs in concept mode only (use concept or auto)");
        }
        if (!config.tracking().enabled()) {
            throw new ConfigException("samstream.tracking.enabled = off: " + sam3
                    + ", which the engine runs with concept tracking only (turn tracking on)");
        }
        if (config.discovery().enabled()) {
            throw new ConfigException("samstream.discovery.enabled = on: automatic discovery needs SAM; " + sam3
                    + " (its concepts find the objects)");
        }
        if (config.sparsity().twoFour()) {
            throw new ConfigException("samstream.model.sparsity = " + config.sparsity().describe()
                    + ": 2:4 sparsity applies to SAM's encoder only; " + sam3);
        }
        return TrackingMode.CONCEPT;
    }
}
