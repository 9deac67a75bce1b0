package io.samstream.stream.track;

import java.util.Optional;

/**
 * One run of one stream's tracking, whatever the mode: what the engine asks of it besides the frames (those go
 * through the mode's own pipeline: {@link WaveTracker} or memory mode's steps). Made by {@link Tracking#open}.
 */
public interface StreamTracker extends AutoCloseable {
    /**
     * Takes up the state another engine's run of the stream kept (failover), before the first frame. A state of
     * another mode (the model changed between the runs) is not its own: the stream starts afresh.
     */
    void takeUp(TrackingState state);

    /** Keeps its state after each frame whose index is a multiple of {@code frames} (0: none), for {@link #takeState}. */
    void keepStateEvery(int frames);

    /** The state kept after {@code frame}, if one was; forgets it and every older one. */
    Optional<? extends TrackingState> takeState(long frame);

    /** Its state after {@code frame} (only while no frame is being tracked); empty for a mode that keeps none. */
    Optional<? extends TrackingState> stateAfter(long frame);

    /**
     * Whether object {@code id}, found by discovery, is tracked now (safe from any thread). Only kalman mode discovers
     * objects.
     */
    default boolean tracksDiscovered(int id) {
        return false;
    }

    /**
     * Whether it finds objects by concepts (SAM 3: {@code prompts.concepts} and the concept ops) rather than by
     * point and box prompts of objects.
     */
    default boolean findsConcepts() {
        return false;
    }

    /** Frees what it holds (a copy of the last embedding, the objects' memory banks). */
    @Override
    void close();
}
