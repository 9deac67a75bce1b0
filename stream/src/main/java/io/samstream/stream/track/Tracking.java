package io.samstream.stream.track;

import io.samstream.config.StreamSpec;

/**
 * How one GPU lane's streams are tracked, chosen once from the lane's model and {@code samstream.tracking}: kalman
 * mode ({@code track.kalman}), SAM 2.1 memory mode ({@code track.memory}) or {@link FixedPrompts}. The engine opens
 * one {@link StreamTracker} per run of a stream and calls nothing else that depends on the mode.
 */
public interface Tracking {
    /** A fresh tracker for one run of {@code stream} (a redefined stream starts with fresh tracks). */
    StreamTracker open(String stream, TrackingMeters meters);

    /**
     * A fresh tracker for one run of the stream {@code spec} defines (a mode may read its per-stream settings); by
     * default as {@link #open(String, TrackingMeters)}.
     */
    default StreamTracker open(StreamSpec spec, TrackingMeters meters) {
        return open(spec.id(), meters);
    }

    /** Whether its trackers find objects by concepts (SAM 3) rather than by prompts of objects. */
    default boolean findsConcepts() {
        return false;
    }
}
