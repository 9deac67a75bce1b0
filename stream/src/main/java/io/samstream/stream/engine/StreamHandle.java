package io.samstream.stream.engine;

import akka.stream.UniqueKillSwitch;
import io.micrometer.core.instrument.Counter;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.stream.track.StreamTracker;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running stream: its counters, and its end. A stream ends when its source ended (a file's end,
 * removal, failure) and every frame it put into the pipeline was published or discarded.
 */
public final class StreamHandle {
    private static final Logger log = LoggerFactory.getLogger(StreamHandle.class);

    /** How a stream ended. */
    public enum State { RUNNING, ENDED, REMOVED, FAILED }

    /** The outcome of a stream, once it ended. */
    public record Result(String streamId, State state, long decoded, long dropped, long published,
            Optional<Throwable> error) {}

    private final StreamSpec spec;
    private final Counter decodedCounter;
    private final Counter droppedCounter;
    private final Counter publishedCounter;
    private final Counter failures;
    private final AtomicLong nextIndex;
    /** This run's counts (the meters above are per stream id, shared with earlier runs of the same id). */
    private final AtomicLong decodedCount = new AtomicLong();
    private final AtomicLong droppedCount = new AtomicLong();
    /** Frames of a taken-over file read and dropped before its first frame here. */
    private final AtomicLong skippedCount = new AtomicLong();
    private final CompletableFuture<Result> result = new CompletableFuture<>();
    private final Runnable onEnd;
    /** The prompts of this run: the configured ones plus the prompts topic's changes. */
    private final StreamPrompts prompts;
    /** This run's tracking, in the mode its GPU lane tracks in. */
    private final StreamTracker tracker;
    /** The size of the last decoded frame (0 before the first), to check run-time prompts against. */
    private volatile int frameWidth;
    private volatile int frameHeight;

    private long emitted;
    private long done;
    private long published;
    private boolean sourceEnded;
    private boolean removed;
    private Throwable error;
    /** Set by a failure inside the pipeline: the stream's remaining frames are discarded. */
    private boolean discarding;
    private volatile UniqueKillSwitch killSwitch;
    private StreamStart start = StreamStart.FRESH;
    /** The last frame whose record was published (acknowledged), and its pts; -1 before the first. */
    private volatile long lastPublished = -1;
    private volatile long lastPublishedPts = -1;
    /** The GPU it runs on, for its whole run: the index of the engine's GPU, and that GPU's meters. */
    private final int gpuIndex;
    private final EngineMetrics.Gpu gpuMeters;
    /** Its place in its lane's fair share of model time (memory mode); never held back elsewhere. */
    private volatile FairShare.Member share = FairShare.UNSHARED;

    /**
     * @param nextIndex the frame counter, shared with the earlier run of a redefined stream so that frames
     *                  its source still decodes and this run's never get the same number
     * @param tracker   this run's tracker (a redefined stream starts with fresh tracks)
     * @param gpuIndex  which of the engine's GPUs it was placed on
     * @param gpuMeters that GPU's meters
     */
    StreamHandle(StreamSpec spec, AtomicLong nextIndex, EngineMetrics metrics, StreamTracker tracker, int gpuIndex,
            EngineMetrics.Gpu gpuMeters, Runnable onEnd) {
        this(spec, nextIndex, metrics, tracker, gpuIndex, gpuMeters, io.samstream.config.Limits.DEFAULTS, onEnd);
    }

    /** @param limits what its run-time prompts are held to ({@code samstream.limits}) */
    StreamHandle(StreamSpec spec, AtomicLong nextIndex, EngineMetrics metrics, StreamTracker tracker, int gpuIndex,
            EngineMetrics.Gpu gpuMeters, io.samstream.config.Limits limits, Runnable onEnd) {
        this.spec = spec;
        this.gpuIndex = gpuIndex;
        this.gpuMeters = gpuMeters;
        this.nextIndex = nextIndex;
        this.decodedCounter = metrics.decoded(spec.id());
        this.droppedCounter = metrics.dropped(spec.id());
        this.publishedCounter = metrics.published(spec.id());
        this.failures = metrics.failures(spec.id());
        this.onEnd = onEnd;
        this.prompts = new StreamPrompts(spec.id(), spec.prompts(), limits);
        this.tracker = tracker;
    }

    void start(StreamStart start) {
        this.start = start;
        start.prompts().ifPresent(prompts::restore);
    }

    /** The GPU it runs on ({@code samstream.gpus}): its ordinal, or "cpu" on the CPU backend. */
    public String gpu() {
        return gpuMeters.label();
    }

    int gpuIndex() {
        return gpuIndex;
    }

    EngineMetrics.Gpu gpuMeters() {
        return gpuMeters;
    }

    /** How it started (fresh, or taken over). */
    public StreamStart started() {
        return start;
    }

    /** The last frame whose record was published (acknowledged); -1 before the first. */
    public long lastPublished() {
        return lastPublished;
    }

    /** That frame's pts in milliseconds; -1 before the first. */
    public long lastPublishedPts() {
        return lastPublishedPts;
    }

    /** This run's tracker (a redefined stream starts with fresh tracks), in its GPU lane's mode. */
    public StreamTracker tracker() {
        return tracker;
    }

    /** This run's tracker as a stage of its lane needs it: every stream of a lane is tracked in the lane's mode. */
    <T extends StreamTracker> T tracker(Class<T> kind) {
        if (!kind.isInstance(tracker)) {
            throw new IllegalStateException("stream " + spec.id() + " is tracked by a "
                    + tracker.getClass().getSimpleName() + ", not a " + kind.getSimpleName());
        }
        return kind.cast(tracker);
    }

    /**
     * The prompted object ids of its newest prompts (configured and changed at run time, pending changes included;
     * discovered objects have none): a new object needs an id not among them.
     */
    public java.util.Set<Integer> promptedIds() {
        return prompts.latest().ids();
    }

    /** Whether its model finds objects by concepts (SAM 3) rather than by points and boxes. */
    public boolean findsConcepts() {
        return tracker.findsConcepts();
    }

    /**
     * The concepts its newest prompts look for (SAM 3) with their exemplar boxes, in the order asked for, pending
     * changes included.
     */
    public java.util.List<io.samstream.stream.track.ConceptPrompt> concepts() {
        return prompts.latest().concepts();
    }

    /** This run's prompts (a redefined stream starts again from its configured prompts). */
    StreamPrompts prompts() {
        return prompts;
    }

    /**
     * Applies a change of the prompts topic from the first frame the decoder has not reached yet (or the
     * message's frame, when later): frames read but still waiting in the pipeline get it too.
     *
     * @return the frame it applies from
     */
    public long applyPrompt(PromptMessage m) throws PromptRejected {
        ModelPrompts.check(spec.id(), m, tracker);
        return prompts.applyNow(m, frameWidth, frameHeight, tracker::tracksDiscovered);
    }

    public String id() {
        return spec.id();
    }

    public StreamSpec spec() {
        return spec;
    }

    /** Completes when the stream ended (never exceptionally: a failure is a {@link State#FAILED} result). */
    public CompletionStage<Result> result() {
        return result;
    }

    public synchronized State state() {
        if (!result.isDone()) {
            return State.RUNNING;
        }
        return result.join().state();
    }

    /** Frames decoded so far (including those dropped). */
    public long decoded() {
        return decodedCount.get();
    }

    public long dropped() {
        return droppedCount.get();
    }

    /**
     * Frames of a taken-over file read and dropped because another engine published them
     * ({@link StreamStart#skipFrames()}); fewer than asked once the file ended means the file is shorter than its
     * state said.
     */
    public long skipped() {
        return skippedCount.get();
    }

    void skippedOne() {
        skippedCount.incrementAndGet();
    }

    public synchronized long published() {
        return published;
    }

    /** Frames in the pipeline: handed to the merge, not yet published or discarded. */
    public synchronized long inPipeline() {
        return emitted - done;
    }

    /** The index the next decoded frame gets (frame numbers go on across reconnects and restarts). */
    long nextIndex() {
        return nextIndex.get();
    }

    /** The frame counter itself, for the next run of a redefined stream. */
    AtomicLong indexCounter() {
        return nextIndex;
    }

    /** True once the stream is being removed or failed: its source stops for good. */
    synchronized boolean removing() {
        return removed || discarding;
    }

    void setShare(FairShare.Member member) {
        this.share = member;
    }

    /** Its place in its lane's fair share ({@link FairShare#UNSHARED} where the lane does not share). */
    FairShare.Member share() {
        return share;
    }

    void setKillSwitch(UniqueKillSwitch killSwitch) {
        this.killSwitch = killSwitch;
    }

    /** Renumbers a decoded frame in this stream's sequence and counts it. */
    VideoFrame decoded(VideoFrame f) {
        frameWidth = f.width();
        frameHeight = f.height();
        decodedCounter.increment();
        decodedCount.incrementAndGet();
        return f.withIndex(spec.id(), nextIndex.getAndIncrement());
    }

    void droppedOne() {
        droppedCounter.increment();
        droppedCount.incrementAndGet();
    }

    synchronized void emitted() {
        emitted++;
    }

    /** True once the stream failed inside the pipeline (its frames are discarded from then on). */
    synchronized boolean failed() {
        return discarding;
    }

    /** The frame left the pipeline: published (record acknowledged) or discarded. */
    void frameDone(boolean wasPublished, long index) {
        prompts.frameDone(index);
        frameDone(wasPublished);
    }

    /** As {@link #frameDone(boolean, long)}, telling the start's progress listener of a published frame. */
    void frameDone(boolean wasPublished, long index, long ptsMillis) {
        if (wasPublished) {
            lastPublished = index;
            lastPublishedPts = ptsMillis;
            StreamStart.Progress p = start.progress();
            if (p != null) {
                try {
                    p.published(this, index, ptsMillis);
                } catch (RuntimeException e) {
                    log.warn("stream {}: progress of frame {}: {}", spec.id(), index, Errors.describe(e));
                }
            }
        }
        frameDone(wasPublished, index);
    }

    void frameDone(boolean wasPublished) {
        if (wasPublished) {
            publishedCounter.increment();
        }
        synchronized (this) {
            done++;
            if (wasPublished) {
                published++;
            }
        }
        maybeEnd();
    }

    /** The source ended; after a failure of its own the frames it decoded are still published. */
    void sourceEnded(Throwable failure) {
        boolean report;
        synchronized (this) {
            sourceEnded = true;
            report = failure != null && error == null && !removed;
            if (report) {
                error = failure;
            }
        }
        if (report) {
            log.error("stream {} failed: {}", spec.id(), Errors.describe(failure));
        }
        maybeEnd();
    }

    /** Fails the stream (its remaining frames are discarded) and stops its source. */
    void fail(Throwable cause) {
        synchronized (this) {
            if (error != null || removed) {
                return;
            }
            error = cause;
            discarding = true;
        }
        share.leave(); // its remaining frames are discarded: they hold no one's turn
        log.error("stream {} failed: {}", spec.id(), Errors.describe(cause));
        UniqueKillSwitch k = killSwitch;
        if (k != null) {
            k.abort(cause);
        }
    }

    /** Stops the source; frames already decoded are still published. */
    void remove() {
        synchronized (this) {
            removed = true;
        }
        share.leave(); // frees its share of model time at once
        UniqueKillSwitch k = killSwitch;
        if (k != null) {
            k.shutdown();
        }
    }

    /** The pipeline itself stopped: the stream ends now, failed, whatever is still in flight. */
    void abandon(Throwable cause) {
        synchronized (this) {
            if (error == null && !removed) {
                error = cause;
            }
            discarding = true;
            sourceEnded = true;
            emitted = done;
        }
        share.leave();
        UniqueKillSwitch k = killSwitch;
        if (k != null) {
            k.abort(cause);
        }
        maybeEnd();
    }

    private void maybeEnd() {
        Result r;
        synchronized (this) {
            if (!sourceEnded || done < emitted || result.isDone()) {
                return;
            }
            // A frame still held by the live policy when the source stopped never entered the pipeline.
            long neverEntered = decoded() - dropped() - emitted;
            if (neverEntered > 0) {
                droppedCounter.increment(neverEntered);
                droppedCount.addAndGet(neverEntered);
            }
            State state = error != null ? State.FAILED : removed ? State.REMOVED : State.ENDED;
            r = new Result(spec.id(), state, decoded(), dropped(), published, Optional.ofNullable(error));
            if (state == State.FAILED) {
                failures.increment();
            }
        }
        share.leave();
        try {
            onEnd.run();
        } finally {
            result.complete(r);
        }
    }
}
