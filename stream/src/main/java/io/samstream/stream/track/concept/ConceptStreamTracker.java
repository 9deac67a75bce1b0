package io.samstream.stream.track.concept;

import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.sam3.video.Concept;
import io.samstream.gpu.sam3.video.Sam3VideoTracker;
import io.samstream.gpu.sam3.video.VideoStep;
import io.samstream.stream.track.ConceptPrompt;
import io.samstream.stream.track.StreamTracker;
import io.samstream.stream.track.TrackPrompts;
import io.samstream.stream.track.TrackedFrame;
import io.samstream.stream.track.TrackingMeters;
import io.samstream.stream.track.TrackingState;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run of one stream in SAM 3's concept tracking: each frame, in order, is one step of its {@link
 * Sam3VideoTracker} with the concepts of the frame's prompts ({@link #step}). A concept that is no longer asked for
 * ends its objects; a reset (a new prompts generation) ends every object, and the concepts are found afresh.
 *
 * <p>Failover: it keeps no state for the state topic. A stream taken over by another engine keeps its concepts
 * (they travel with its prompts) but its objects restart from detection there, with new ids.
 */
public final class ConceptStreamTracker implements StreamTracker {
    private static final Logger log = LoggerFactory.getLogger(ConceptStreamTracker.class);

    private final String stream;
    private final Sam3VideoTracker tracker;
    private final TrackingMeters meters;
    private final ConceptFrames frames = new ConceptFrames();
    /** The prompts generation of the last frame; -1 before the first (a stream taken over starts at its own). */
    private long generation = -1;

    ConceptStreamTracker(String stream, Sam3VideoTracker tracker, TrackingMeters meters) {
        this.stream = stream;
        this.tracker = tracker;
        this.meters = meters;
    }

    /**
     * The next frame (8-bit RGB, row-major) with its prompts: its objects, hidden and lost ids. Frames come one at a
     * time, in order.
     */
    public TrackedFrame step(int width, int height, byte[] rgb, TrackPrompts prompts) {
        return step(width, height, rgb, prompts, null);
    }

    /**
     * The next frame's image features, made ahead of its {@link #step(int, int, byte[], TrackPrompts,
     * Sam3VideoTracker.Encoded) step} while this stream's current step may still run (see {@link
     * Sam3VideoTracker#encode}).
     */
    public Sam3VideoTracker.Encoded encode(int width, int height, byte[] rgb) {
        return tracker.encode(new RgbImage(width, height, rgb));
    }

    /**
     * {@link #step(int, int, byte[], TrackPrompts)} with the frame's features made ahead by {@link #encode} (null:
     * made here); the step takes them over.
     */
    public TrackedFrame step(int width, int height, byte[] rgb, TrackPrompts prompts,
            Sam3VideoTracker.Encoded ahead) {
        try (ahead) { // a no-op once the step took the features; releases them when it failed first
            return stepOnce(new RgbImage(width, height, rgb), prompts, ahead);
        }
    }

    private TrackedFrame stepOnce(RgbImage image, TrackPrompts prompts, Sam3VideoTracker.Encoded ahead) {
        List<Integer> ended = List.of();
        if (generation == -1) {
            generation = prompts.generation();
        } else if (prompts.generation() != generation) {
            generation = prompts.generation();
            // A step without concepts ends every object (no model work; the tracker's frame count moves on by one, so
            // the detection cadence shifts by a frame), reported with this frame's lost ids; the step below finds
            // the concepts afresh.
            log.info("stream {}: prompts reset: its concepts are detected afresh", stream);
            ended = frames.of(tracker.step(image, List.of())).lost();
        }
        return step(image, ahead, prompts.concepts(), ended);
    }

    private TrackedFrame step(RgbImage image, Sam3VideoTracker.Encoded ahead, List<ConceptPrompt> concepts,
            List<Integer> ended) {
        List<Concept> wanted = ConceptInputs.of(concepts, image.width(), image.height());
        VideoStep s = ahead != null ? tracker.step(ahead, wanted) : tracker.step(image, wanted);
        TrackedFrame f = frames.of(s);
        if (!ended.isEmpty()) {
            List<Integer> lost = new ArrayList<>(ended);
            lost.addAll(f.lost());
            f = new TrackedFrame(f.masks(), f.hidden(), lost);
        }
        meters.discovered().increment(frames.found()); // found by a concept, as discovery finds objects
        meters.lost().increment(f.lost().size());
        meters.active().set(tracker.objectCount());
        return f;
    }

    /** Frames so far on which its detector ran (its cadence, and each concept's first frame). */
    public long detectionFrames() {
        return tracker.detectionFrames();
    }

    /** The objects it tracks now, all concepts. */
    public int objectCount() {
        return tracker.objectCount();
    }

    @Override
    public boolean findsConcepts() {
        return true;
    }

    @Override
    public void takeUp(TrackingState state) {
        log.info("stream {}: its {} state is not taken up: concept tracks restart from detection", stream,
                state.key());
    }

    @Override
    public void keepStateEvery(int frames) {}

    @Override
    public Optional<TrackingState> takeState(long frame) {
        return Optional.empty();
    }

    @Override
    public Optional<TrackingState> stateAfter(long frame) {
        return Optional.empty();
    }

    @Override
    public void close() {
        tracker.close();
    }
}
