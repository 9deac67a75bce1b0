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
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The rounds of {@link MemoryStage}: a batch's frames go to the model in rounds (one model call each); round N+1 is
 * prepared and called while round N's masks are made on the host pool, and round N is finished (the streams'
 * bookkeeping) after that call. A frame joins a round while its stream's frames of the round before are unfinished
 * only where {@link MemoryTracker#prepareAhead} allows. The work runs one task at a time on {@code executor}, in the
 * order submitted: each batch's rounds, and the finish of a round left unfinished when no batch followed; the state
 * here is touched by those tasks only. Batches are handed on in order, once every frame of theirs is finished.
 */
final class MemoryRounds {
    private final Executor executor;
    private final Executor host;
    private final EngineMetrics.Gpu metrics;
    private final Runnable modelFree;
    private final Consumer<List<Job.Decoded>> done;
    private final Consumer<Throwable> failed;
    /** An object's mask made on the host pool; the stage's wait for a round's masks when it finishes it. */
    private final Timer summaryTime;
    private final Timer finishWait;
    private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);
    /** The last round called and not yet finished (its masks summarized meanwhile). */
    private Round inFlight;
    /** Batches not yet out, in order. */
    private final Deque<Batch> batches = new ArrayDeque<>();

    /**
     * @param executor  runs the rounds, one task at a time
     * @param host      prepares a round's streams at once and makes its masks
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
        this.finishWait = metrics.stageTime("mask-wait");
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
     * round in flight where they may be), called, then the round before finished.
     */
    private void batch(Batch b) {
        batches.add(b);
        Map<StreamHandle, ArrayDeque<Integer>> queues = new LinkedHashMap<>();
        for (int i = 0; i < b.jobs.size(); i++) {
            queues.computeIfAbsent(b.jobs.get(i).stream(), k -> new ArrayDeque<>()).add(i);
        }
        while (queues.values().stream().anyMatch(q -> !q.isEmpty())) {
            Round before = inFlight;
            List<Prepared> prepared = eachStream(host, queues.values().stream().filter(q -> !q.isEmpty())
                    .toList(), queue -> prepareStream(b, queue, before));
            List<Integer> toModel = new ArrayList<>();
            List<MemoryTracker.Pending> pending = new ArrayList<>();
            for (Prepared p : prepared) {
                toModel.addAll(p.toModel());
                pending.addAll(p.pending());
            }
            Round next = toModel.isEmpty() ? null : call(b, toModel, pending, () -> finish(before));
            finish(before);
            if (next != null) {
                inFlight = next;
            } else if (prepared.stream().allMatch(p -> p.taken() == 0) && before == null) {
                throw new IllegalStateException("memory mode: no frame of the batch could be prepared");
            }
        }
        b.prepared = true;
        release();
        modelFree.run();
        Round left = inFlight;
        if (left != null) {
            // Finished by the next batch after its first call, or here once its masks are made if none came.
            left.masks.whenComplete((m, e) -> run(() -> finish(left)));
        }
    }

    /** The model's call for a round's prepared frames; their masks summarized on the host pool meanwhile. */
    private Round call(Batch b, List<Integer> toModel, List<MemoryTracker.Pending> pending, Runnable settle) {
        long t0 = System.nanoTime();
        long[] callCost = new long[toModel.size()];
        List<List<ObjectResult>> results = MemoryCalls.trackCall(b.jobs, toModel, pending, callCost, settle);
        metrics.decoderTime.record((System.nanoTime() - t0) / toModel.size(), TimeUnit.NANOSECONDS);
        for (int w = 0; w < toModel.size(); w++) {
            b.cost[toModel.get(w)] += callCost[w];
            b.out[toModel.get(w)] = new Job.Decoded(b.jobs.get(toModel.get(w)), null);
        }
        Round r = new Round(b, toModel, pending, results);
        r.masks = summarize(r);
        b.open++;
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
     * A called round's frames read into their outcomes, in order, once its masks are made (nothing if it is null
     * or finished already); then the batches that are complete leave.
     */
    private void finish(Round r) {
        if (r == null || r.finished) {
            return;
        }
        r.finished = true;
        if (inFlight == r) {
            inFlight = null;
        }
        long t0 = System.nanoTime();
        Masks[] masks = r.masks.join();
        finishWait.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
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
        r.batch.open--;
        release();
    }

    /** Hands on the batches at the head that are complete, in order. */
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
        CompletableFuture<Masks[]> masks;
        boolean finished;

        Round(Batch batch, List<Integer> frames, List<MemoryTracker.Pending> pending,
              List<List<ObjectResult>> results) {
            this.batch = batch;
            this.frames = frames;
            this.pending = pending;
            this.results = results;
        }

        /** This round's frames of {@code stream} (prepared, not yet finished), in order. */
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
     * the queue), ahead of the stream's frames in round {@code before} (called, not yet finished); frames that need no
     * model call, or whose stream failed, get their outcome here. A model that does not batch (the CPU reference)
     * takes one frame of a stream a call. Touches only this stream's state, so streams are prepared at once.
     */
    private static Prepared prepareStream(Batch b, ArrayDeque<Integer> queue, Round before) {
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
                    unfinished = before == null ? new ArrayList<>() : before.of(job.stream());
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
     * {@code work} for each of {@code parts} (one stream's each), at once on {@code host}, results in order; the
     * last part runs on the calling thread, and a single part runs there alone. The work catches its frames'
     * failures itself; anything else it throws is rethrown here (in a CompletionException), after every part is done.
     */
    private static <P, R> List<R> eachStream(Executor host, List<P> parts, Function<P, R> work) {
        List<CompletableFuture<R>> all = new ArrayList<>(parts.size());
        for (int k = 0; k < parts.size() - 1; k++) {
            P part = parts.get(k);
            all.add(CompletableFuture.supplyAsync(() -> work.apply(part), host));
        }
        if (!parts.isEmpty()) {
            CompletableFuture<R> mine = new CompletableFuture<>();
            try {
                mine.complete(work.apply(parts.get(parts.size() - 1)));
            } catch (RuntimeException | Error e) {
                mine.completeExceptionally(e);
            }
            all.add(mine);
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).exceptionally(e -> null).join();
        return all.stream().map(CompletableFuture::join).toList();
    }
}
