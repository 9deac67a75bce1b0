package io.samstream.stream.engine;

import io.samstream.config.EngineSettings;
import io.samstream.gpu.SamModels;
import io.samstream.stream.track.Discovery;
import io.samstream.stream.track.FixedPrompts;
import io.samstream.stream.track.Tracking;
import io.samstream.stream.track.concept.ConceptTracking;
import io.samstream.stream.track.kalman.KalmanTracking;
import io.samstream.stream.track.memory.MemoryTracking;
import java.util.Optional;

/**
 * One GPU of the engine ({@code samstream.gpus}): its backend (encoder and mask decoder, with their memory and
 * embedding ring on that GPU) and automatic discovery on it. The engine gives each its own micro-batching,
 * encoder and decoder stages and its {@link #tracking}; a stream placed on it stays there while it runs.
 *
 * @param gpu       the GPU's ordinal, or {@link SamModels.DeviceBackend#CPU} for the CPU backend
 * @param segmenter the model work on its backend
 * @param discovery discovery of new objects on its backend (with tracking on); empty: none
 */
public record GpuLane(int gpu, Segmenter segmenter, Optional<Discovery> discovery) {
    /** On the GPU the segmenter's model runs on ({@link Segmenter#gpu}). */
    public static GpuLane of(Segmenter segmenter, Optional<Discovery> discovery) {
        return new GpuLane(segmenter.gpu(), segmenter, discovery);
    }

    /**
     * How this lane's streams are tracked: the one place the mode is chosen. A SAM 2.1 model tracks in memory mode
     * (its family and {@code samstream.tracking.mode} were checked against each other before the model loaded); SAM 3
     * by concepts; SAM in kalman mode, with this lane's discovery, when tracking is on, else with fixed prompts.
     */
    public Tracking tracking(EngineSettings.Tracking settings) {
        if (segmenter.conceptModel() != null) {
            return new ConceptTracking(segmenter.conceptModel(), segmenter.conceptSettings(), settings);
        }
        if (segmenter.memoryModel() != null) {
            return new MemoryTracking(segmenter.memoryModel(), settings);
        }
        return settings.enabled() ? new KalmanTracking(segmenter.backend(), settings, discovery.orElse(null))
                : new FixedPrompts(segmenter.backend());
    }

    /** The {@code gpu} metric tag: the ordinal, or "cpu". */
    public String label() {
        return SamModels.DeviceBackend.label(gpu);
    }
}
