package io.samstream.stream.engine;

import io.micrometer.core.instrument.Timer;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.sam2.ObjectResult;
import io.samstream.stream.track.memory.MemoryTracker;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The rounds of {@link MemoryStage}: a batch's frames go to the model in rounds, one model call each. A called round's
 * masks are made on the host pool, one task an object, and the round is then finished there too (its streams'
 * bookkeeping, frame after frame), round after round in call order; meanwhile the stage's thread prepares and calls
 * the next round. A frame joins a round while frames of its stream are unfinished only where {@link
 * MemoryTracker#prepareAhead} allows (their finish cannot change it, nor touch the objects its call steps); otherwise
 * it waits for a later round. At most {@value #MAX_OPEN} rounds are called and not yet finished. The stage's work runs
 * one task at a time on {@code executor}, in the order submitted; batches are handed on in order, once every frame of
 * theirs is finished.
 */
final class MemoryRounds {
    /** Rounds called and not yet finished, at most: one being finished while the next is called. */
    static final int MAX_OPEN = 2;

    private final Executor executor;
    private final Executor host;
    private final EngineMetrics.Gpu metrics;
    private final Runnable modelFree;
    private final Consumer<List<Job.Decoded>> done;
    private final Consumer<Throwable> failed;
    /** An object's mask made on the host pool; the stage's wait for earlier rounds to be finished. */
    private final Timer summaryTime;
    private final Timer finishWait;
    private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);
    /** Rounds called and not yet seen finished, in call order (the stage's tasks only). */
    private final List<Round> open = new ArrayList<>();
    /** The last round's finish: the next round's follows it (the stage's tasks only). */
    private CompletableFuture<Void> finishes = CompletableFuture.completedFuture(null);
    /** Batches not yet out, in order (under this object's lock, as their counts). */
    private final Deque<Batch> batches = new ArrayDeque<>();

    /**
     * @param executor  runs the rounds, one task at a time
     * @param host      prepares a round's streams at once, makes its masks and finishes it
     * @param modelFree told when a batch's last call is done: the next batch may come
     * @param done      given each batch's outcomes, in batch order
     * @param failed    told of a failure that is no frame's (the stage fails)
     */
    MemoryRounds(Executor executor, Executor host, EngineMetrics.Gpu metrics, Runnable modelFree,
                 Consumer<List<Job.Decoded>> done, Consumer<Throwable> failed) {
        this.executor = executor;
        this.host = host;
        this.metrics = metrics;
        this.modelFree = modelFree;
        this.done = done;
        this.failed = failed;
        this.summaryTime = metrics.stageTime("mask-summary");
        this.finishWait = metrics.stageTime("finish-wait");
    }

    /** Queues a batch: its rounds run after those of the batches before it. */
    void submit(List<Job> jobs) {
        run(() -> batch(new Batch(jobs)));
    }

    private synchronized void run(Runnable task) {
        tail = tail.thenRunAsync(() -> {
            try {
                task.run();
            } catch (RuntimeException | Error e) {
                failed.accept(e);
            }
        }, executor);
    }

    /**
     * A batch's frames, round after round until each is called or done: each round's frames prepared (ahead of the
     * unfinished rounds where they may be) and called; a frame that must wait for its stream's unfinished frames is
     * tried again in a later round, after the oldest unfinished round is finished when nothing else could go.
     */
    private void batch(Batch b) {
        synchronized (this) {
            batches.add(b);
        }
        Map<StreamHandle, ArrayDeque<Integer>> queues = new LinkedHashMap<>();
        for (int i = 0; i < b.jobs.size(); i++) {
            queues.computeIfAbsent(b.jobs.get(i).stream(), k -> new ArrayDeque<>()).add(i);
        }
        while (queues.values().stream().anyMatch(q -> !q.isEmpty())) {
            open.removeIf(r -> r.finished.isDone());
            List<Round> unfinished = List.copyOf(open);
            List<Prepared> prepared = eachStream(host, queues.values().stream().filter(q -> !q.isEmpty())
                    .toList(), queue -> prepareStream(b, queue, unfinished));
            List<Integer> toModel = new ArrayList<>();
            List<MemoryTracker.Pending> pending = new ArrayList<>();
            for (Prepared p : prepared) {
                toModel.addAll(p.toModel());
                pending.addAll(p.pending());
            }
            if (!toModel.isEmpty()) {
                if (open.size() >= MAX_OPEN) {
                    waitFor(open.get(0));
                }
                open.add(call(b, toModel, pending));
            } else if (prepared.stream().allMatch(p -> p.taken() == 0)) {
                if (open.isEmpty()) {
                    throw new IllegalStateException("memory mode: no frame of the batch could be prepared");
                }
                waitFor(open.get(0)); // the frames left wait for their streams' frames before them
            }
        }
        synchronized (this) {
            b.prepared = true;
            release();
        }
        modelFree.run();
    }

    /** Waits until round {@code r} is finished. */
    private void waitFor(Round r) {
        long t0 = System.nanoTime();
        r.finished.join();
        finishWait.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
    }

    /**
     * The model's call for a round's prepared frames; their masks then made on the host pool and the round finished
     * there after the round before. A refused call waits for every unfinished round first (see {@link MemoryCalls}).
     */
    private Round call(Batch b, List<Integer> toModel, List<MemoryTracker.Pending> pending) {
        long t0 = System.nanoTime();
        long[] callCost = new long[toModel.size()];
        List<List<ObjectResult>> results = MemoryCalls.trackCall(b.jobs, toModel, pending, callCost,
                () -> open.forEach(this::waitFor));
        metrics.decoderTime.record((System.nanoTime() - t0) / toModel.size(), TimeUnit.NANOSECONDS);
        for (int w = 0; w < toModel.size(); w++) {
            b.cost[toModel.get(w)] += callCost[w];
            b.out[toModel.get(w)] = new Job.Decoded(b.jobs.get(toModel.get(w)), null);
        }
        Round r = new Round(b, toModel, pending, results);
        synchronized (this) {
            b.open++;
        }
        CompletableFuture<Masks[]> masks = summarize(r);
        r.finished = finishes.thenCombine(masks, (v, m) -> m).thenAcceptAsync(m -> finish(r, m), host)
                .exceptionally(e -> {
                    failed.accept(e);
                    return null;
                });
        finishes = r.finished;
        return r;
    }

    /** Each visible object's mask of the round, one task per object on the host pool. */
    private CompletableFuture<Masks[]> summarize(Round r) {
        Masks[] all = new Masks[r.frames.size()];
        List<CompletableFuture<Void>> parts = new ArrayList<>();
        for (int w = 0; w < all.length; w++) {
            List<ObjectResult> results = r.results.get(w);
            if (results == null) {
                continue;
            }
            Masks m = all[w] = new Masks(results.size());
            MemoryTracker.Pending p = r.pending.get(w);
            for (int j = 0; j < results.size(); j++) {
                int k = j;
                parts.add(CompletableFuture.runAsync(() -> {
                    long t0 = System.nanoTime();
                    try {
                        m.masks[k] = MemoryTracker.mask(p, results.get(k));
                    } catch (RuntimeException | Error ex) {
                        m.error = ex;
                    }
                    summaryTime.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
                }, host));
            }
        }
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).thenApply(v -> all);
    }

    /**
     * A called round's frames read into their outcomes, in order, with their masks; then the batches that are
     * complete leave. A frame's failure fails its stream.
     */
    private void finish(Round r, Masks[] masks) {
        for (int w = 0; w < r.frames.size(); w++) {
            Job job = r.batch.jobs.get(r.frames.get(w));
            if (r.results.get(w) == null || job.stream().failed()) {
                continue;
            }
            try {
                if (masks[w].error != null) {
                    throw masks[w].error;
                }
                r.batch.out[r.frames.get(w)] = new Job.Decoded(job, job.stream().tracker(MemoryTracker.class)
                        .finish(r.pending.get(w), r.results.get(w), Arrays.asList(masks[w].masks)));
            } catch (Throwable ex) {
                Stages.failFrame(job, ex);
            }
        }
        synchronized (this) {
            r.batch.open--;
            release();
        }
    }

    /** Hands on the batches at the head that are complete, in order; under the lock. */
    private void release() {
        while (!batches.isEmpty() && batches.peek().complete()) {
            Batch b = batches.poll();
            for (int i = 0; i < b.jobs.size(); i++) {
                b.jobs.get(i).stream().share().done(b.cost[i]);
                if (b.out[i] == null) {
                    b.out[i] = new Job.Decoded(b.jobs.get(i), null);
                }
            }
            metrics.batchesInFlight.decrementAndGet();
            done.accept(List.of(b.out));
        }
    }

    /** A micro-batch in the stage: its frames' outcomes so far and their model time (nanoseconds). */
    private static final class Batch {
        final List<Job> jobs;
        final Job.Decoded[] out;
        final long[] cost;
        /** Its rounds called and not yet finished. */
        int open;
        /** Whether every frame of it has been prepared (and called, where the model was needed). */
        boolean prepared;

        Batch(List<Job> jobs) {
            this.jobs = jobs;
            this.out = new Job.Decoded[jobs.size()];
            this.cost = new long[jobs.size()];
        }

        boolean complete() {
            return prepared && open == 0;
        }
    }

    /**
     * One model call's frames: their indices in the batch (a stream's consecutive and in frame order), what the model
     * needed for each, its results (null for a frame whose stream failed) and the masks being summarized.
     */
    private static final class Round {
        final Batch batch;
        final List<Integer> frames;
        final List<MemoryTracker.Pending> pending;
        final List<List<ObjectResult>> results;
        /** Done once every frame of the round is finished. */
        CompletableFuture<Void> finished;

        Round(Batch batch, List<Integer> frames, List<MemoryTracker.Pending> pending,
              List<List<ObjectResult>> results) {
            this.batch = batch;
            this.frames = frames;
            this.pending = pending;
            this.results = results;
        }

        /** This round's frames of {@code stream}, in order. */
        List<MemoryTracker.Pending> of(StreamHandle stream) {
            List<MemoryTracker.Pending> mine = new ArrayList<>();
            for (int w = 0; w < frames.size(); w++) {
                if (batch.jobs.get(frames.get(w)).stream() == stream) {
                    mine.add(pending.get(w));
                }
            }
            return mine;
        }
    }

    /** A frame's masks ({@link MemoryTracker#mask}, one per result), or what failed making them. */
    private static final class Masks {
        final MaskSummary[] masks;
        volatile Throwable error;

        Masks(int n) {
            masks = new MaskSummary[n];
        }
    }

    /** One stream's frames prepared for a call, their indices in the batch, and how many it took off its queue. */
    private record Prepared(List<Integer> toModel, List<MemoryTracker.Pending> pending, int taken) {}

    /**
     * The frames at the head of one stream's {@code queue} that can go to the next call, prepared in order (taken off
     * the queue), ahead of the stream's frames in {@code rounds} (called, maybe not yet finished); frames that need no
     * model call, or whose stream failed, get their outcome here. A model that does not batch (the CPU reference)
     * takes one frame of a stream a call. Touches only this stream's state, so streams are prepared at once.
     */
    private static Prepared prepareStream(Batch b, ArrayDeque<Integer> queue, List<Round> rounds) {
        List<Integer> toModel = new ArrayList<>();
        List<MemoryTracker.Pending> mine = new ArrayList<>();
        List<MemoryTracker.Pending> unfinished = null;
        int taken = 0;
        while (!queue.isEmpty()) {
            int i = queue.peek();
            Job job = b.jobs.get(i);
            if (job.stream().failed()) {
                b.out[i] = new Job.Decoded(job, null);
                queue.poll();
                taken++;
                continue;
            }
            try {
                MemoryTracker tracker = job.stream().tracker(MemoryTracker.class);
                if (!mine.isEmpty() && !tracker.model().batches()) {
                    break; // one frame of a stream per call: wave by wave
                }
                if (unfinished == null) {
                    unfinished = new ArrayList<>();
                    for (Round r : rounds) {
                        unfinished.addAll(r.of(job.stream()));
                    }
                }
                VideoFrame f = job.frame();
                StreamPrompts.Snapshot prompts = job.stream().prompts().take(f.index());
                MemoryTracker.Pending p = tracker.prepareAhead(unfinished, f.index(), f.width(), f.height(),
                        f.rgb(), job.modelInput(), prompts.trackPrompts(f.width(), f.height()));
                if (p == null) {
                    break; // after the stream's unfinished frames are finished
                }
                queue.poll();
                taken++;
                if (p.done() != null) {
                    b.out[i] = new Job.Decoded(job, p.done());
                } else {
                    toModel.add(i);
                    mine.add(p);
                    unfinished.add(p);
                }
            } catch (RuntimeException | Error ex) {
                queue.poll();
                taken++;
                b.out[i] = new Job.Decoded(job, null);
                Stages.failFrame(job, ex);
            }
        }
        return new Prepared(toModel, mine, taken);
    }

    /**
     * {@code work} for each of {@code parts} (one stream's each), results in order: offered to {@code host} and run by
     * the calling thread too, each part by whichever thread takes it first, so the caller never waits for a part
     * queued behind other work on the pool (a round's masks, say); it waits only for parts a pool thread has begun.
     * The work catches its frames' failures itself; anything else it throws is rethrown here (in a
     * CompletionException), after every part is done.
     */
    private static <P, R> List<R> eachStream(Executor host, List<P> parts, Function<P, R> work) {
        int n = parts.size();
        List<CompletableFuture<R>> results = new ArrayList<>(n);
        List<Runnable> runs = new ArrayList<>(n);
        for (int k = 0; k < n; k++) {
            P part = parts.get(k);
            CompletableFuture<R> result = new CompletableFuture<>();
            AtomicBoolean taken = new AtomicBoolean();
            results.add(result);
            runs.add(() -> {
                if (taken.compareAndSet(false, true)) {
                    try {
                        result.complete(work.apply(part));
                    } catch (RuntimeException | Error e) {
                        result.completeExceptionally(e);
                    }
                }
            });
        }
        for (int k = 0; k < n - 1; k++) {
            host.execute(runs.get(k));
        }
        for (int k = n - 1; k >= 0; k--) {
            runs.get(k).run();
        }
        CompletableFuture.allOf(results.toArray(CompletableFuture[]::new)).exceptionally(e -> null).join();
        return results.stream().map(CompletableFuture::join).toList();
    }
}
