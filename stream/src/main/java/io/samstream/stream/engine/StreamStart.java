package io.samstream.stream.engine;

import io.samstream.stream.track.TrackingState;
import java.util.Optional;

/**
 * How a stream starts: fresh, or taken over from another engine (failover).
 *
 * @param firstFrame  the number its first frame gets
 * @param skipFrames  frames of a file read and dropped first (those another engine published)
 * @param tracking    the tracker's state to take up before the first frame (its mode's tracks or objects)
 * @param prompts     the run-time prompts in force (and pending) to take up before the first frame
 * @param stateEvery  the tracker keeps its state after every this many frames (0: never)
 * @param progress    told of each published frame, in order, on the engine's thread; null for none
 */
public record StreamStart(long firstFrame, long skipFrames, Optional<TrackingState> tracking,
        Optional<PromptsState> prompts, int stateEvery, Progress progress) {
    public static final StreamStart FRESH = new StreamStart(0, 0, Optional.empty(), Optional.empty(), 0, null);

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
