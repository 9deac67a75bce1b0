package io.samstream.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/** The engine's own sections of the configuration (everything but the model and Kafka). */
public final class EngineSettings {
    private EngineSettings() {}

    /**
     * {@code samstream.batching}: a batch leaves at {@code maxBatch} frames or {@code maxLatency} after
     * its first frame, whichever comes first.
     */
    public record Batching(int maxBatch, Duration maxLatency) {}

    /**
     * {@code samstream.pipeline}.
     *
     * @param inFlight    batches being encoded/decoded at once (CUDA streams on the GPU)
     * @param pendingAcks frames published but not yet acknowledged by the sinks; past it, everything waits
     * @param sinkThreads threads handing records to the sinks (serializing and compressing them); a stream's
     *                    records always go through the same one, in order
     */
    public record Pipeline(int inFlight, int pendingAcks, int sinkThreads) {
        /** The default number of sink threads. */
        public static final int DEFAULT_SINK_THREADS = 4;

        public Pipeline(int inFlight, int pendingAcks) {
            this(inFlight, pendingAcks, DEFAULT_SINK_THREADS);
        }
    }

    /** {@code samstream.reconnect}: backoff between restarts of a live source. */
    public record Reconnect(Duration minBackoff, Duration maxBackoff, double randomFactor) {}

    /**
     * {@code samstream.sinks}.
     *
     * @param kafka      publish mask records to the masks topic
     * @param jsonlDir   when present, {@code DIR/<stream>/masks.jsonl}
     * @param overlayDir when present, {@code DIR/<stream>/overlay.mp4}
     */
    public record Sinks(boolean kafka, Optional<Path> jsonlDir, Optional<Path> overlayDir) {}

    /**
     * {@code samstream.metrics}: whether the HTTP server ({@code samstream.http}, whose host and port it uses) serves
     * the Prometheus scrape endpoint {@code /metrics}.
     */
    public record Metrics(boolean enabled) {}

    /**
     * {@code samstream.tracking}: objects followed from frame to frame.
     *
     * @param enabled         off: every frame is decoded with the stream's prompts as they are (no tracks)
     * @param lostAfter       consecutive bad frames (predicted IoU or stability below its minimum) after
     *                        which an object is lost
     * @param minPredictedIou a frame whose mask's predicted IoU is below it is bad
     * @param minStability    a frame whose mask's stability score is below it is bad
     * @param mergeIou        two tracks whose masks overlap this much (IoU) are one object
     * @param hiddenLostAfter consecutive bad frames after which an object is lost even when another object in
     *                        front of it explains them (bad frames so explained do not count towards lostAfter);
     *                        in memory mode, consecutive frames whose object score says not visible
     * @param mode            memory (SAM 2.1), kalman (SAM), or auto (by the checkpoint's model)
     * @param cameraMotion    whether kalman mode moves predicted boxes with the image's estimated shift
     * @param reidSearch      how far from its last box a lost object is searched for where the image looks like it,
     *                        in the object's sizes (0: off, probed at its last box only)
     * @param reidSearchSpeed how fast that reach grows, in the object's sizes per frame since it was last seen
     * @param memoryForgetAfter memory mode: frames after an object is lost during which its memory is kept and it is
     *                        still followed unpublished, so that it can be found again (0: dropped when lost)
     * @param memoryFoundAfter memory mode: frames in a row a lost object must be scored visible, clear of the frame's
     *                        other objects, to be published again under its id
     */
    public record Tracking(boolean enabled, int lostAfter, double minPredictedIou, double minStability,
            double mergeIou, int hiddenLostAfter, double minAppearance, double sceneCutSimilarity, int reidWindow,
            double reidAppearance, TrackingMode mode, boolean cameraMotion, double reidSearch, double reidSearchSpeed,
            int memoryForgetAfter, int memoryFoundAfter, int conceptsEveryFrames) {
        /** The longest detection cadence of concept tracking ({@code concepts.every-frames}). */
        public static final int MAX_CONCEPTS_EVERY_FRAMES = 10_000;

        public Tracking {
            java.util.Objects.requireNonNull(mode, "mode");
            if (conceptsEveryFrames < 1 || conceptsEveryFrames > MAX_CONCEPTS_EVERY_FRAMES) {
                throw new IllegalArgumentException("concepts.every-frames must be 1 to " + MAX_CONCEPTS_EVERY_FRAMES
                        + ", got " + conceptsEveryFrames);
            }
            if (memoryForgetAfter < 0 || memoryFoundAfter < 1) {
                throw new IllegalArgumentException("memory-forget-after must be at least 0 and memory-found-after at"
                        + " least 1, got " + memoryForgetAfter + " and " + memoryFoundAfter);
            }
        }

        /** Concept tracking's detection on every frame. */
        public Tracking(boolean enabled, int lostAfter, double minPredictedIou, double minStability,
                double mergeIou, int hiddenLostAfter, double minAppearance, double sceneCutSimilarity, int reidWindow,
                double reidAppearance, TrackingMode mode, boolean cameraMotion, double reidSearch,
                double reidSearchSpeed, int memoryForgetAfter, int memoryFoundAfter) {
            this(enabled, lostAfter, minPredictedIou, minStability, mergeIou, hiddenLostAfter, minAppearance,
                    sceneCutSimilarity, reidWindow, reidAppearance, mode, cameraMotion, reidSearch, reidSearchSpeed,
                    memoryForgetAfter, memoryFoundAfter, 1);
        }

        /** These settings with concept tracking's detector run every {@code n}-th frame. */
        public Tracking withConceptsEveryFrames(int n) {
            return new Tracking(enabled, lostAfter, minPredictedIou, minStability, mergeIou, hiddenLostAfter,
                    minAppearance, sceneCutSimilarity, reidWindow, reidAppearance, mode, cameraMotion, reidSearch,
                    reidSearchSpeed, memoryForgetAfter, memoryFoundAfter, n);
        }

        /** Memory mode's lost objects at their defaults. */
        public Tracking(boolean enabled, int lostAfter, double minPredictedIou, double minStability,
                double mergeIou, int hiddenLostAfter, double minAppearance, double sceneCutSimilarity, int reidWindow,
                double reidAppearance, TrackingMode mode, boolean cameraMotion, double reidSearch,
                double reidSearchSpeed) {
            this(enabled, lostAfter, minPredictedIou, minStability, mergeIou, hiddenLostAfter, minAppearance,
                    sceneCutSimilarity, reidWindow, reidAppearance, mode, cameraMotion, reidSearch, reidSearchSpeed,
                    DEFAULT_MEMORY_FORGET_AFTER, DEFAULT_MEMORY_FOUND_AFTER);
        }

        /** The appearance search at its defaults. */
        public Tracking(boolean enabled, int lostAfter, double minPredictedIou, double minStability, double mergeIou,
                int hiddenLostAfter, double minAppearance, double sceneCutSimilarity, int reidWindow,
                double reidAppearance, TrackingMode mode, boolean cameraMotion) {
            this(enabled, lostAfter, minPredictedIou, minStability, mergeIou, hiddenLostAfter, minAppearance,
                    sceneCutSimilarity, reidWindow, reidAppearance, mode, cameraMotion, DEFAULT_REID_SEARCH,
                    DEFAULT_REID_SEARCH_SPEED);
        }

        /** Mode auto, camera motion on. */
        public Tracking(boolean enabled, int lostAfter, double minPredictedIou, double minStability, double mergeIou,
                int hiddenLostAfter, double minAppearance, double sceneCutSimilarity, int reidWindow,
                double reidAppearance) {
            this(enabled, lostAfter, minPredictedIou, minStability, mergeIou, hiddenLostAfter, minAppearance,
                    sceneCutSimilarity, reidWindow, reidAppearance, TrackingMode.AUTO, true);
        }

        /** These settings in another mode. */
        public Tracking withMode(TrackingMode m) {
            return new Tracking(enabled, lostAfter, minPredictedIou, minStability, mergeIou, hiddenLostAfter,
                    minAppearance, sceneCutSimilarity, reidWindow, reidAppearance, m, cameraMotion, reidSearch,
                    reidSearchSpeed, memoryForgetAfter, memoryFoundAfter, conceptsEveryFrames);
        }

        /** These settings with camera-motion compensation on or off. */
        public Tracking withCameraMotion(boolean on) {
            return new Tracking(enabled, lostAfter, minPredictedIou, minStability, mergeIou, hiddenLostAfter,
                    minAppearance, sceneCutSimilarity, reidWindow, reidAppearance, mode, on, reidSearch,
                    reidSearchSpeed, memoryForgetAfter, memoryFoundAfter, conceptsEveryFrames);
        }

        /** These settings with the appearance search's reach ({@code reid-search}; 0: off). */
        public Tracking withReidSearch(double reach) {
            return new Tracking(enabled, lostAfter, minPredictedIou, minStability, mergeIou, hiddenLostAfter,
                    minAppearance, sceneCutSimilarity, reidWindow, reidAppearance, mode, cameraMotion, reach,
                    reidSearchSpeed, memoryForgetAfter, memoryFoundAfter, conceptsEveryFrames);
        }

        /** These settings with memory mode's lost objects kept {@code forgetAfter} frames, found after {@code foundAfter}. */
        public Tracking withMemoryRefind(int forgetAfter, int foundAfter) {
            return new Tracking(enabled, lostAfter, minPredictedIou, minStability, mergeIou, hiddenLostAfter,
                    minAppearance, sceneCutSimilarity, reidWindow, reidAppearance, mode, cameraMotion, reidSearch,
                    reidSearchSpeed, forgetAfter, foundAfter, conceptsEveryFrames);
        }

        /** The appearance keys at their defaults. */
        public Tracking(boolean enabled, int lostAfter, double minPredictedIou, double minStability, double mergeIou,
                int hiddenLostAfter) {
            this(enabled, lostAfter, minPredictedIou, minStability, mergeIou, hiddenLostAfter, DEFAULT_MIN_APPEARANCE,
                    DEFAULT_SCENE_CUT, DEFAULT_REID_WINDOW, DEFAULT_REID_APPEARANCE);
        }

        /** reference.conf's values of the appearance keys. */
        public static final double DEFAULT_MIN_APPEARANCE = 0.5;
        public static final double DEFAULT_SCENE_CUT = 0.6;
        public static final int DEFAULT_REID_WINDOW = 60;
        public static final double DEFAULT_REID_APPEARANCE = 0.8;
        public static final double DEFAULT_REID_SEARCH = 2.5;
        public static final double DEFAULT_REID_SEARCH_SPEED = 0.1;
        public static final int DEFAULT_MEMORY_FORGET_AFTER = 90;
        public static final int DEFAULT_MEMORY_FOUND_AFTER = 3;

        /** Off: the stream's prompts decoded as they are on every frame. */
        public static Tracking off() {
            return new Tracking(false, 5, 0.5, 0.6, 0.85, 30);
        }
    }

    /**
     * {@code samstream.discovery}: SAM's automatic mask generation on key frames, new objects become tracks.
     *
     * @param enabled              on: every {@code interval} frames (from a stream's first), needs tracking
     * @param interval             frames between key frames
     * @param pointsPerSide        the point grid (N x N points)
     * @param predIouThreshold     generated masks with a lower predicted IoU are dropped
     * @param stabilityThreshold   generated masks with a lower stability score are dropped
     * @param nmsIou               box non-maximum suppression threshold among generated masks
     * @param minArea              generated masks with fewer pixels are dropped
     * @param newObjectMaxOverlap  a generated mask covered more than this fraction by a live track's mask is
     *                             that object, not a new one
     */
    public record Discovery(boolean enabled, int interval, int pointsPerSide, double predIouThreshold,
            double stabilityThreshold, double nmsIou, int minArea, double newObjectMaxOverlap) {
        public static Discovery off() {
            return new Discovery(false, 30, 16, 0.86, 0.92, 0.7, 64, 0.5);
        }
    }
}
