package io.samstream.stream.engine;

import akka.NotUsed;
import akka.stream.Attributes;
import akka.stream.FlowShape;
import akka.stream.Inlet;
import akka.stream.Outlet;
import akka.stream.javadsl.Flow;
import akka.stream.stage.AbstractInHandler;
import akka.stream.stage.AbstractOutHandler;
import akka.stream.stage.AsyncCallback;
import akka.stream.stage.GraphStage;
import akka.stream.stage.GraphStageLogic;
import io.micrometer.core.instrument.Timer;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.sam2.ObjectPrompt;
import io.samstream.gpu.sam2.ObjectResult;
import io.samstream.gpu.sam2.Sam2Tracking;
import io.samstream.stream.track.memory.MemoryTracker;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Memory mode's model stage (SAM 2.1): each frame of a micro-batch is one step of its stream's {@link MemoryTracker}
 * (image encoder, memory attention, heads and memory encoder per object). A step is three parts:
 * <ol>
 *   <li><b>prepare</b> (host, the stream's bookkeeping: prompts, resets, what the model follows);</li>
 *   <li>the model's <b>call</b>, one for a whole round of frames where the model batches (on a GPU);</li>
 *   <li><b>finish</b>: each object's mask brought to the frame's size and summarized (the costly host part), then the
 *       stream's bookkeeping (hidden, lost, found again).</li>
 * </ol>
 * The rounds are pipelined: the masks of round N are summarized on the {@code host} pool while the model runs round
 * N+1, and round N's bookkeeping runs after that call. Round N+1 may therefore hold a frame whose stream's frames in
 * round N are not finished yet: only where {@link MemoryTracker#prepareAhead} says their finish cannot change it;
 * otherwise the frame waits for a later round. So each stream's outcome is the one stepping frame by frame gives, and
 * only the summaries, which touch no state, ever run beside the model. The rounds run one at a time on {@code
 * executor}, in order; a round's streams are prepared at once on {@code host}.
 *
 * <p>The stage asks its upstream (the micro-batcher) for a batch when the model is free: after the last call of the
 * batch before. A batch's frames leave, in batch order, once all of them are finished (its last round is finished by
 * the next batch's work after that batch's first call, or as soon as its summaries are done when no batch waits).
 * A frame that fails fails its stream only; when a call is refused, its streams go through one by one so that only the
 * stream at fault fails. Each frame's model time is charged to its stream's {@link FairShare} when its batch leaves.
 */
final class MemoryStage extends GraphStage<FlowShape<List<Job>, List<Job.Decoded>>> {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(MemoryStage.class);

    private final Executor executor;
    private final Executor host;
    private final EngineMetrics.Gpu metrics;
    private final Inlet<List<Job>> in = Inlet.create("MemoryStage.in");
    private final Outlet<List<Job.Decoded>> out = Outlet.create("MemoryStage.out");
    private final FlowShape<List<Job>, List<Job.Decoded>> shape = FlowShape.of(in, out);

    private MemoryStage(Executor executor, Executor host, EngineMetrics.Gpu metrics) {
        this.executor = executor;
        this.host = host;
        this.metrics = metrics;
    }

    /** The stage, its batches' frames out one by one in order. */
    static Flow<List<Job>, Job.Decoded, NotUsed> flow(Executor executor, Executor host, EngineMetrics.Gpu metrics) {
        return Flow.fromGraph(new MemoryStage(executor, host, metrics)).mapConcat(list -> list);
    }

    /**
     * Memory mode, before the batcher: each frame whose stream follows objects resized to the model's {@code side} x
     * {@code side} input, {@code parallelism} frames at once on {@code host}, in order. That is the costliest host
     * part of a step (a 1080p frame's Pillow resize), taken off the model's stage so it overlaps the GPU's work on
     * earlier batches. A frame this skips (its stream failed or follows nothing yet, its bytes unreadable) is
     * resized, or fails its stream, where it is prepared, as before. Each resize is timed as stage {@code model-input}.
     */
    static Flow<Job, Job, NotUsed> inputs(int side, int parallelism, Executor host, EngineMetrics.Gpu metrics) {
        return Flow.<Job>create().mapAsync(parallelism, job -> {
            if (job.stream().failed() || job.stream().prompts().forFrame(job.frame().index()).state().ids().isEmpty()) {
                return CompletableFuture.completedFuture(job);
            }
            return CompletableFuture.supplyAsync(() -> {
                VideoFrame f = job.frame();
                long t0 = System.nanoTime();
                try {
                    byte[] input = MemoryTracker.modelInput(side, f.width(), f.height(), f.rgb());
                    metrics.stageTime("model-input").record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
                    return new Job(job.stream(), f, input);
                } catch (RuntimeException | Error ex) {
                    return job; // its preparation meets the same fault and fails the stream, naming it
                }
            }, host);
        });
    }

    @Override
    public FlowShape<List<Job>, List<Job.Decoded>> shape() {
        return shape;
    }

    @Override
    public GraphStageLogic createLogic(Attributes attributes) {
        return new GraphStageLogic(shape) {
            private final Deque<List<Job.Decoded>> finished = new ArrayDeque<>();
            private int outstanding;
            private boolean modelFree = true;
            private final AsyncCallback<Boolean> free = createAsyncCallback(b -> {
                modelFree = true;
                pullIfWanted();
            });
            private final AsyncCallback<List<Job.Decoded>> done = createAsyncCallback(frames -> {
                outstanding--;
                finished.add(frames);
                pushIfAvailable();
                pullIfWanted();
                completeIfDone();
            });
            private final AsyncCallback<Throwable> failed = createAsyncCallback(this::failStage);
            private final Rounds rounds = new Rounds(() -> free.invoke(true), done::invoke, failed::invoke);

            {
                setHandler(in, new AbstractInHandler() {
                    @Override
                    public void onPush() {
                        List<Job> jobs = grab(in);
                        Stages.batchLeaves(jobs, metrics);
                        modelFree = false;
                        outstanding++;
                        rounds.submit(jobs);
                    }

                    @Override
                    public void onUpstreamFinish() {
                        completeIfDone();
                    }
                });
                setHandler(out, new AbstractOutHandler() {
                    @Override
                    public void onPull() {
                        pushIfAvailable();
                        pullIfWanted();
                        completeIfDone();
                    }
                });
            }

            @Override
            public void preStart() {
                pull(in);
            }

            /** The next batch is taken when the model is free and the finished ones are not piling up downstream. */
            private void pullIfWanted() {
                if (modelFree && finished.size() < 2 && !isClosed(in) && !hasBeenPulled(in)) {
                    pull(in);
                }
            }

            private void pushIfAvailable() {
                if (!finished.isEmpty() && isAvailable(out)) {
                    push(out, finished.poll());
                }
            }

            private void completeIfDone() {
                if (isClosed(in) && outstanding == 0 && finished.isEmpty()) {
                    completeStage();
                }
            }
        };
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

    /**
     * The stage's work, one task at a time on the executor in the order submitted: each batch's rounds, and the
     * finish of a round left unfinished when no batch followed. State is touched by those tasks only.
     */
    private final class Rounds {
        private final Runnable modelFree;
        private final java.util.function.Consumer<List<Job.Decoded>> done;
        private final java.util.function.Consumer<Throwable> failed;
        /** An object's mask made on the host pool; the stage's wait for a round's masks when it finishes it. */
        private final Timer summaryTime = metrics.stageTime("mask-summary");
        private final Timer finishWait = metrics.stageTime("mask-wait");
        private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);
        /** The last round called and not yet finished (its masks summarized meanwhile). */
        private Round inFlight;
        /** Batches not yet out, in order. */
        private final Deque<Batch> batches = new ArrayDeque<>();

        Rounds(Runnable modelFree, java.util.function.Consumer<List<Job.Decoded>> done,
               java.util.function.Consumer<Throwable> failed) {
            this.modelFree = modelFree;
            this.done = done;
            this.failed = failed;
        }

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
            List<List<ObjectResult>> results = trackCall(b.jobs, toModel, pending, callCost, settle);
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

    /**
     * The model's results for a call's prepared frames, in order (a stream's frames consecutive in the list, in
     * frame order); null for a frame whose stream failed. A call the model refuses goes stream by stream: each
     * stream's frames in one call when the model batches, else frame by frame; {@code settle} (the round before
     * finished) runs first, so that a stream that makes room for its new objects does so as stepping frame by frame
     * would. Each frame's share of the time is put in {@code cost} ({@link #apportion}).
     */
    private static List<List<ObjectResult>> trackCall(List<Job> jobs, List<Integer> toModel,
                                                      List<MemoryTracker.Pending> pending, long[] cost,
                                                      Runnable settle) {
        Sam2Tracking model = jobs.get(toModel.get(0)).stream().tracker(MemoryTracker.class).model();
        List<Sam2Tracking.StreamTracker> streams = new ArrayList<>();
        List<byte[]> frames = new ArrayList<>();
        List<List<ObjectPrompt>> prompts = new ArrayList<>();
        for (MemoryTracker.Pending p : pending) {
            streams.add(p.stream());
            frames.add(p.square());
            prompts.add(p.prompts());
        }
        boolean severalStreams = false;
        for (int i : toModel) {
            severalStreams |= jobs.get(i).stream() != jobs.get(toModel.get(0)).stream();
        }
        if (streams.size() > 1 && model.batches()) {
            if (!severalStreams) {
                return timed(() -> trackStream(jobs, toModel, pending, model, 0, streams.size(), settle), pending, 0,
                        cost);
            }
            try {
                return timed(() -> model.track(streams, frames, prompts), pending, 0, cost);
            } catch (RuntimeException ex) {
                log.warn("memory mode: a batch of {} frames failed ({}); stepping the streams one by one",
                        streams.size(), ex.toString());
                settle.run();
            }
        }
        List<List<ObjectResult>> out = new ArrayList<>();
        for (int from = 0; from < streams.size(); ) {
            int to = from + 1;
            while (model.batches() && to < streams.size() && jobs.get(toModel.get(to)).stream()
                    == jobs.get(toModel.get(from)).stream()) {
                to++;
            }
            int f = from, t = to;
            out.addAll(timed(() -> trackStream(jobs, toModel, pending, model, f, t, settle), pending, from, cost));
            from = to;
        }
        return out;
    }

    /** Runs {@code call} (for the frames from {@code from} on) and apportions its time among them. */
    private static List<List<ObjectResult>> timed(Supplier<List<List<ObjectResult>>> call,
                                                  List<MemoryTracker.Pending> pending, int from, long[] cost) {
        long t0 = System.nanoTime();
        List<List<ObjectResult>> r = call.get();
        apportion(System.nanoTime() - t0, pending.subList(from, from + r.size()), cost, from);
        return r;
    }

    /**
     * A call's time among its frames, by weight 1 + the frame's objects: a step's cost is the image encoder's (about
     * the same for every frame) plus each object's memory attention, heads and memory encoder. On the CPU each
     * stream's step is a call of its own, so this is its measured time; in a batched GPU call the split is the
     * model's cost shape, not a measurement of each stream.
     */
    static void apportion(long nanos, List<MemoryTracker.Pending> frames, long[] cost, int offset) {
        long total = 0;
        for (MemoryTracker.Pending p : frames) {
            total += 1 + p.current().size();
        }
        for (int i = 0; i < frames.size(); i++) {
            cost[offset + i] += nanos * (1 + frames.get(i).current().size()) / Math.max(1, total);
        }
    }

    /**
     * Frames {@code from..to-1} of a call, one stream's (one frame unless the model batches): their results, or nulls
     * when the model refuses them and the stream fails. A tracker that batches refuses a bad call before any work
     * (its object limit among the reasons): the round before is finished ({@code settle}), the stream's lost objects
     * whose memory was kept make room, and the frames are tried once more.
     */
    private static List<List<ObjectResult>> trackStream(List<Job> jobs, List<Integer> toModel,
                                                        List<MemoryTracker.Pending> pending, Sam2Tracking model,
                                                        int from, int to, Runnable settle) {
        List<Sam2Tracking.StreamTracker> streams = new ArrayList<>();
        List<byte[]> frames = new ArrayList<>();
        List<List<ObjectPrompt>> prompts = new ArrayList<>();
        for (int w = from; w < to; w++) {
            streams.add(pending.get(w).stream());
            frames.add(pending.get(w).square());
            prompts.add(pending.get(w).prompts());
        }
        Job first = jobs.get(toModel.get(from));
        try {
            return to - from == 1 ? List.of(streams.get(0).track(frames.get(0), prompts.get(0)))
                    : model.track(streams, frames, prompts);
        } catch (RuntimeException | Error ex) {
            Throwable fault = ex;
            if (ex instanceof RuntimeException && model.batches()) {
                settle.run();
                if (first.stream().tracker(MemoryTracker.class).forgetRemembered(pending.get(from)) > 0) {
                    try {
                        return to - from == 1 ? List.of(streams.get(0).track(frames.get(0), prompts.get(0)))
                                : model.track(streams, frames, prompts);
                    } catch (RuntimeException | Error again) {
                        fault = again;
                    }
                }
            }
            Stages.failFrame(first, fault);
            return new ArrayList<>(Collections.nCopies(to - from, null));
        }
    }
}
