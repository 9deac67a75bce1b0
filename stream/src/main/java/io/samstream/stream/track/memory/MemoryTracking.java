package io.samstream.stream.track.memory;

import io.samstream.config.EngineSettings;
import io.samstream.gpu.sam2.Sam2Tracking;
import io.samstream.stream.track.Tracking;
import io.samstream.stream.track.TrackingMeters;

/**
 * SAM 2.1 memory mode on one model: a {@link MemoryTracker} per run of a stream, with the lost-object rules of
 * {@code samstream.tracking} ({@code hidden-lost-after}, {@code memory-forget-after}, {@code memory-found-after}).
 */
public final class MemoryTracking implements Tracking {
    private final Sam2Tracking model;
    private final EngineSettings.Tracking settings;

    public MemoryTracking(Sam2Tracking model, EngineSettings.Tracking settings) {
        this.model = model;
        this.settings = settings;
    }

    /** The side of the model's square input, which every frame is resized to ({@link MemoryTracker#modelInput}). */
    public int inputSide() {
        return model.config().imageSize();
    }

    @Override
    public MemoryTracker open(String stream, TrackingMeters meters) {
        return new MemoryTracker(stream, model, settings.hiddenLostAfter(), settings.memoryForgetAfter(),
                settings.memoryFoundAfter(), meters);
    }
}
