package io.samstream.stream.engine;

import io.samstream.stream.track.memory.MemoryTrackerState;
import io.samstream.stream.track.kalman.TrackerState;
import java.util.Optional;

/**
 * How a stream starts: fresh, or taken over from another engine (failover).
 *
 * @param firstFrame  the number its first frame gets
 * @param skipFrames  frames of a file read and dropped first (those another engine published)
 * @param tracks      the tracks to take up before the first frame (kalman mode)
 * @param memory      the objects to take up before the first frame (memory mode)
 * @param prompts     the run-time prompts in force (and pending) to take up before the first frame
 * @param stateEvery  the tracker keeps its state after every this many frames (0: never)
 * @param progress    told of each published frame, in order, on the engine's thread; null for none
 */
public record StreamStart(long firstFrame, long skipFrames, Optional<TrackerState> tracks,
        Optional<MemoryTrackerState> memory, Optional<PromptsState> prompts, int stateEvery, Progress progress) {
    public static final StreamStart FRESH = new StreamStart(0, 0, Optional.empty(), Optional.empty(),
            Optional.empty(), 0, null);

    public StreamStart {
        if (firstFrame < 0 || skipFrames < 0 || stateEvery < 0) {
            throw new IllegalArgumentException("negative firstFrame, skipFrames or stateEvery");
        }
    }

    /** A stream's published frames, in order. */
    @FunctionalInterface
    public interface Progress {
        void published(StreamHandle stream, long frame, long ptsMillis);
    }
}
