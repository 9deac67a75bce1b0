package io.samstream.stream.track.concept;

import io.samstream.config.EngineSettings;
import io.samstream.config.StreamSpec;
import io.samstream.gpu.sam3.video.Sam3VideoModel;
import io.samstream.gpu.sam3.video.Sam3VideoSettings;
import io.samstream.stream.track.Tracking;
import io.samstream.stream.track.TrackingMeters;

/**
 * SAM 3's concept tracking on one model: a {@link ConceptStreamTracker} per run of a stream, with the model's
 * settings and what {@code samstream.tracking} says of the cadence and of lost objects: {@code concepts.every-frames}
 * (detection; a stream's {@code prompts.concepts-every-frames} overrides it), {@code hidden-lost-after} (frames without a mask before an object is lost) and {@code
 * memory-forget-after} (further frames it is still followed, found again when its mask comes back).
 */
public final class ConceptTracking implements Tracking {
    private final Sam3VideoModel model;
    private final Sam3VideoSettings settings;

    /** @param base the model's settings (thresholds, heuristics, object limit); the engine's keys override the rest */
    public ConceptTracking(Sam3VideoModel model, Sam3VideoSettings base, EngineSettings.Tracking tracking) {
        this.model = model;
        this.settings = base.withEveryFrames(tracking.conceptsEveryFrames()).withBounds(base.maxObjects(),
                tracking.hiddenLostAfter(), tracking.memoryForgetAfter());
    }

    /** The settings each stream runs with. */
    public Sam3VideoSettings settings() {
        return settings;
    }

    @Override
    public boolean findsConcepts() {
        return true;
    }

    @Override
    public ConceptStreamTracker open(String stream, TrackingMeters meters) {
        return new ConceptStreamTracker(stream, model.openStream(settings), meters);
    }

    /** The stream's own detection cadence ({@code prompts.concepts-every-frames}) when it has one, else the engine's. */
    @Override
    public ConceptStreamTracker open(StreamSpec spec, TrackingMeters meters) {
        int every = spec.prompts().conceptsEveryFrames();
        return new ConceptStreamTracker(spec.id(), model.openStream(every > 0 ? settings.withEveryFrames(every)
                : settings), meters);
    }
}
