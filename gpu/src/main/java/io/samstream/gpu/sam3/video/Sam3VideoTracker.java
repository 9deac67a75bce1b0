package io.samstream.gpu.sam3.video;

import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Sam3Preprocessor;
import io.samstream.gpu.sam3.VisionFeatures;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * SAM 3's concept tracking on one stream, in streaming form: frames come one at a time and are never revisited;
 * each call of {@link #step} gives the frame's objects, each with a stable id and the concept that found it.
 *
 * <p>A step encodes the frame once (the ViT, the detector's neck and the tracker's), then steps each concept
 * ({@link ConceptTracker}, in the order the concepts were first asked for): its tracks propagated by the tracker,
 * the detector run on frames that are a multiple of {@code everyFrames} (and on a concept's first frame), matches,
 * new objects, removals, memory, outputs. Concepts are independent of one another, as separate sessions of Meta's
 * predictor are (one text prompt each); ids are unique across the stream's concepts. A concept no longer passed
 * ends its objects. Memory per object is bounded ({@link ObjectMemory}), objects per stream too ({@code maxObjects},
 * lost objects forgotten), so a stream's state stays flat however long it runs. A stream's steps run one at a time;
 * streams of one model may step side by side: the model's CPU parts keep no state between calls and its GPU parts
 * serialize their own passes, so one stream's CPU work can overlap another's GPU work.
 *
 * <p>How this differs from Meta's {@code Sam3VideoPredictor}, which processes a finite video in a session: frames are
 * processed once, forward, without the session's re-run of the prompted frame; nothing waits for the hot-start
 * delay (an object shows from its first frame; one that hot-start removes stops showing); detection may skip frames;
 * memory and the object count are bounded; lost objects are eventually forgotten. See the parts for the details.
 */
public final class Sam3VideoTracker implements AutoCloseable {
    /** Concepts one stream may look for at once. */
    public static final int MAX_CONCEPTS = 16;

    private final Sam3VideoModel model;
    private final ConceptDetector detector;
    private final TrackerPasses passes;
    private final Sam3VideoSettings settings;
    private final Map<Concept, ConceptTracker> concepts = new LinkedHashMap<>();
    private int frame;
    private long nextId;
    /** Frames on which the detector ran for at least one concept. */
    private volatile long detectionFrames; // written by its steps (one at a time), read by anyone

    Sam3VideoTracker(Sam3VideoModel model, ConceptDetector detector, TrackerPasses passes,
            Sam3VideoSettings settings) {
        this.model = model;
        this.detector = detector;
        this.passes = passes;
        this.settings = settings;
    }

    public Sam3VideoSettings settings() {
        return settings;
    }

    /** The index the next frame gets (0 for the first). */
    public int nextFrame() {
        return frame;
    }

    /** The next frame (8-bit RGB of any size) with the concepts to look for (at most a few; none: tracking ends). */
    public VideoStep step(RgbImage image, List<Concept> concepts) {
        return step(() -> model.detector().encodeImage(image), image.width(), image.height(), concepts);
    }

    /**
     * Encodes a frame ahead of its step (the ViT and the detector's neck, most of a frame's GPU work), so that a
     * stream's next frame, when it is already there (a file, a camera's backlog), is encoded while the current one's
     * step runs: the step's CPU work then overlaps GPU work at one stream as lanes of streams overlap it at several.
     * Reads nothing of the stream's state, so it may run on another thread beside {@link #step}. The frame must be
     * stepped ({@link #step(Encoded, List)}) or closed.
     */
    public Encoded encode(RgbImage image) {
        return new Encoded(model.detector().encodeImage(image), image.width(), image.height());
    }

    /** {@link #step(RgbImage, List)} of a frame {@link #encode}d ahead; the step takes its features over. */
    public VideoStep step(Encoded frame, List<Concept> concepts) {
        VisionFeatures vision = frame.take();
        try {
            return step(() -> vision, frame.width, frame.height, concepts);
        } finally {
            vision.release(); // no-op when the step released them; released here when it did not encode
        }
    }

    /**
     * The next frame as the model's input ([3, S, S], normalized, as {@link Sam3Preprocessor#modelInput} makes it)
     * of a frame of width x height, with the concepts to look for. A bad argument is refused before the stream
     * moves on.
     */
    public VideoStep step(float[] modelInput, int width, int height, List<Concept> wanted) {
        int s = model.detector().config().vision().imageSize();
        if (modelInput == null || modelInput.length != 3 * s * s) {
            throw new IllegalArgumentException("model input of " + (modelInput == null ? 0 : modelInput.length)
                    + " values; 3 x " + s + " x " + s + " expected");
        }
        return step(() -> model.detector().encodeImage(modelInput), width, height, wanted);
    }

    /** The next frame, encoded by {@code encode} once there is a concept to look for. */
    private VideoStep step(Supplier<VisionFeatures> encode, int width, int height, List<Concept> wanted) {
        if (width <= 0 || height <= 0 || (long) width * height > (1L << 28)) {
            throw new IllegalArgumentException("frame size " + width + " x " + height);
        }
        LinkedHashSet<Concept> asked = new LinkedHashSet<>(wanted);
        if (asked.size() > MAX_CONCEPTS) {
            throw new IllegalArgumentException(asked.size() + " concepts on one stream, at most "
                    + MAX_CONCEPTS);
        }
        synchronized (this) {
            int t = frame++;
            List<Long> dropped = new ArrayList<>();
            for (Map.Entry<Concept, ConceptTracker> e : new ArrayList<>(concepts.entrySet())) {
                if (!asked.contains(e.getKey())) {
                    for (Track tr : e.getValue().tracks()) {
                        dropped.add(tr.id);
                    }
                    concepts.remove(e.getKey()).release();
                }
            }
            for (Concept c : asked) {
                concepts.computeIfAbsent(c, k -> new ConceptTracker(k, passes, model.detector().pool(),
                        detector, model.overlap(), settings));
            }
            List<TrackedObject> objects = new ArrayList<>();
            List<Long> hidden = new ArrayList<>();
            List<Long> lost = new ArrayList<>();
            if (!concepts.isEmpty()) {
                VisionFeatures vision = encode.get();
                boolean detect = t % settings.everyFrames() == 0;
                boolean detected = false;
                TrackerFrame features = null;
                try {
                    FeatureMap[] levels = model.detector().trackerLevels(vision);
                    try {
                        features = passes.features(model.detector().pool(), levels);
                    } finally {
                        for (FeatureMap level : levels) {
                            level.release(); // the passes keep what they read of them
                        }
                    }
                    for (ConceptTracker ct : concepts.values()) {
                        detected |= detect || !ct.started();
                        int capacity = settings.maxObjects() - objectCount();
                        ConceptTracker.Result r = ct.step(t, vision, features, width, height, detect, capacity,
                                () -> nextId++);
                        objects.addAll(r.objects());
                        hidden.addAll(r.hidden());
                        lost.addAll(r.lost());
                        dropped.addAll(r.dropped());
                    }
                } finally {
                    vision.release(); // the frame's features are not read again: a GPU backend reuses their slots
                    if (features != null) {
                        features.release();
                    }
                }
                if (detected) {
                    detectionFrames++;
                }
            }
            objects.sort(Comparator.comparingLong(TrackedObject::id));
            return new VideoStep(t, objects, hidden, lost, dropped);
        }
    }

    /** A frame's image features made ahead of its step ({@link #encode}); closing an unstepped one releases them. */
    public static final class Encoded implements AutoCloseable {
        private VisionFeatures vision;
        private final int width, height;

        private Encoded(VisionFeatures vision, int width, int height) {
            this.vision = vision;
            this.width = width;
            this.height = height;
        }

        private synchronized VisionFeatures take() {
            if (vision == null) {
                throw new IllegalStateException("a frame encoded ahead was stepped or closed already");
            }
            VisionFeatures v = vision;
            vision = null;
            return v;
        }

        @Override
        public synchronized void close() {
            if (vision != null) {
                vision.release();
                vision = null;
            }
        }
    }

    /** Frames so far on which the detector ran for at least one concept (the cadence, and concepts' first frames). */
    public long detectionFrames() {
        return detectionFrames;
    }

    /** Objects tracked now, all concepts. */
    public int objectCount() {
        return concepts.values().stream().mapToInt(ConceptTracker::size).sum();
    }

    /** Floats the stream's object memories hold now (flat on a long stream). */
    public long heldFloats() {
        return concepts.values().stream().mapToLong(ConceptTracker::heldFloats).sum();
    }

    /** Records the heuristics hold now (bounded likewise). */
    public int bookkeeping() {
        return concepts.values().stream().mapToInt(ConceptTracker::bookkeeping).sum();
    }

    /** Ends every object (the model stays open for other streams). */
    @Override
    public synchronized void close() {
        concepts.values().forEach(ConceptTracker::release);
        concepts.clear();
    }
}
