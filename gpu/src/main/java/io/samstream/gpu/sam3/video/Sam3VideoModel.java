package io.samstream.gpu.sam3.video;

import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.sam3.Sam3Backend;
import io.samstream.gpu.sam3.Sam3Checkpoint;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3ConfigInference;
import io.samstream.gpu.sam3.Sam3Model;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import java.nio.file.Path;

/**
 * SAM 3's video model: the detector ({@link Sam3Model}, the image path) and the tracker ({@link Sam3TrackerModel},
 * whose passes may run elsewhere: {@link TrackerPasses}) of one {@code sam3.pt}, their weights read once and shared by
 * every stream opened on it ({@link #openStream}). By default everything runs on the fp32 CPU reference; a backend
 * factory puts the detector's heavy parts on a GPU, a tracker-passes factory the tracker's. Streams are independent
 * and may step side by side on the model's thread pool (a stream's own steps one at a time).
 */
public final class Sam3VideoModel implements AutoCloseable {
    private final Sam3Model detector;
    private final Sam3TrackerModel tracker;
    private final TrackerPasses passes;
    private final Sam3Tokenizer tokenizer;
    private final Overlap overlap;

    /** The video model of a state_dict with both halves (Meta's sam3.pt); the tokenizer's vocabulary must match. */
    public Sam3VideoModel(StateDict checkpoint, Sam3Tokenizer tokenizer, int threads) {
        this(checkpoint, tokenizer, threads, Sam3Backend.cpu());
    }

    /**
     * As above with the detector's heavy parts on {@code backend} (e.g. the GPU's, {@link Sam3Backend}); the rest of
     * the detector and the tracker on the CPU.
     */
    public Sam3VideoModel(StateDict checkpoint, Sam3Tokenizer tokenizer, int threads, Sam3Backend.Factory backend) {
        this(checkpoint, tokenizer, threads, backend, TrackerPasses.Factory.cpu());
    }

    /**
     * As above with the tracker's passes from {@code trackerPasses} (e.g. a GPU's), which the model closes with itself.
     * The vocabulary is checked before anything opens; when the passes fail to open, the detector is closed again.
     */
    public Sam3VideoModel(StateDict checkpoint, Sam3Tokenizer tokenizer, int threads, Sam3Backend.Factory backend,
            TrackerPasses.Factory trackerPasses) {
        this(checkpoint, tokenizer, threads, backend, trackerPasses, true);
    }

    /**
     * As above; {@code overlapDetection} whether a frame's detection runs on a helper thread beside the propagation of
     * the concept's tracks ({@link Overlap}: the same results, the detector's work hidden behind the tracker's), or
     * after it on the stream's thread (a profile that times each part alone needs that).
     */
    public Sam3VideoModel(StateDict checkpoint, Sam3Tokenizer tokenizer, int threads, Sam3Backend.Factory backend,
            TrackerPasses.Factory trackerPasses, boolean overlapDetection) {
        Sam3Config config = Sam3ConfigInference.infer(checkpoint);
        if (tokenizer.vocabularySize() != config.text().vocabSize()) {
            throw new IllegalArgumentException("the tokenizer's vocabulary has " + tokenizer.vocabularySize()
                    + " ids but the text encoder embeds " + config.text().vocabSize() + " (" + tokenizer + ")");
        }
        Sam3TrackerConfig trackerConfig = Sam3ConfigInference.inferTracker(checkpoint, config);
        this.tracker = new Sam3TrackerModel(checkpoint, trackerConfig);
        this.detector = new Sam3Model(checkpoint, config, threads, backend);
        this.tokenizer = tokenizer;
        try {
            this.passes = trackerPasses.open(checkpoint, trackerConfig, tracker);
        } catch (RuntimeException e) {
            detector.close();
            throw e;
        }
        this.overlap = overlapDetection ? Overlap.threads() : Overlap.serial();
    }

    /** sam3.pt and the vocabulary next to it ({@link Sam3Tokenizer#forCheckpoint}). */
    public static Sam3VideoModel open(Path checkpoint, int threads) {
        Sam3Tokenizer tokenizer = Sam3Tokenizer.forCheckpoint(checkpoint);
        StateDict sd = CheckpointLoader.load(checkpoint);
        if (!Sam3Checkpoint.hasTracker(sd)) {
            Sam3Checkpoint.tracker(sd); // throws, naming what is missing
        }
        return new Sam3VideoModel(sd, tokenizer, threads);
    }

    public Sam3Model detector() {
        return detector;
    }

    /** The tracker's CPU reference (its features, and the passes when no other runs them). */
    public Sam3TrackerModel tracker() {
        return tracker;
    }

    /** The tracker passes the model's streams run: {@link #tracker()} itself, or those a factory opened. */
    public TrackerPasses trackerPasses() {
        return passes;
    }

    public Sam3Tokenizer tokenizer() {
        return tokenizer;
    }

    /** How its streams' steps run a frame's detection beside the tracks' propagation. */
    Overlap overlap() {
        return overlap;
    }

    /**
     * Where the model runs, for logs: "detector: " its {@link Sam3Model#describe()}, "; tracker: " where its passes run
     * ({@link TrackerPasses#describe()}), or "CPU (fp32)".
     */
    public String describe() {
        String t = passes.describe();
        return "detector: " + detector.describe() + "; tracker: " + (t == null ? "CPU (fp32)" : t);
    }

    /** A new stream with these settings, detecting with the model's own detector. */
    public Sam3VideoTracker openStream(Sam3VideoSettings settings) {
        return new Sam3VideoTracker(this, new Sam3ConceptDetector(detector, tokenizer, settings.detectionThreshold(),
                settings.nmsIou()), passes, settings);
    }

    /** A new stream whose detections come from {@code detector} (tests script it). */
    public Sam3VideoTracker openStream(Sam3VideoSettings settings, ConceptDetector detector) {
        return new Sam3VideoTracker(this, detector, passes, settings);
    }

    /** A stream whose tracker passes are scripted too (tests of the rules with known masks). */
    Sam3VideoTracker openStream(Sam3VideoSettings settings, ConceptDetector detector, TrackerPasses passes) {
        return new Sam3VideoTracker(this, detector, passes, settings);
    }

    /** Stops the detection helpers, closes the tracker passes (when not the CPU reference's), then the detector. */
    @Override
    public void close() {
        overlap.close();
        try {
            passes.close();
        } finally {
            detector.close();
        }
    }

    @Override
    public String toString() {
        return detector.config() + "; " + tracker.config();
    }
}
