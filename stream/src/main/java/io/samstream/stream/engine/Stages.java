package io.samstream.stream.engine;

import akka.NotUsed;
import akka.stream.javadsl.Flow;
import io.micrometer.core.instrument.Timer;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.sam2.ObjectPrompt;
import io.samstream.gpu.sam2.ObjectResult;
import io.samstream.gpu.sam2.Sam2Tracking;
import io.samstream.stream.track.FrameStep;
import io.samstream.stream.track.memory.MemoryTracker;
import io.samstream.stream.track.Wave;
import io.samstream.stream.track.WaveTracker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/** The engine's pipeline stages after the merge, each a small flow with one job. */
final class Stages {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Stages.class);

    private Stages() {}

    /**
     * Encoder: at most {@code inFlight} batches at once on {@code executor}, in order. The backend queues the
     * GPU work and returns embeddings that are ready once their events fire (CUDA), so this stage stages
     * frames while the GPU still runs earlier batches. A batch that fails fails the streams of its frames only.
     */
    static Flow<List<Job>, Job.Encoded, NotUsed> encoder(Segmenter segmenter, int inFlight, Executor executor,
            EngineMetrics.Gpu metrics) {
        return Flow.<List<Job>>create().mapAsync(inFlight, jobs -> {
            batchLeaves(jobs, metrics);
            return CompletableFuture.supplyAsync(() -> {
                List<Job> live = new ArrayList<>(jobs.size());
                for (Job j : jobs) {
                    if (!j.stream().failed()) {
                        live.add(j);
                    }
                }
                if (live.isEmpty()) {
                    return new Job.Encoded(jobs, List.of(), null);
                }
                Timer.Sample t = Timer.start();
                List<ImageEmbedding> e;
                try {
                    e = segmenter.embed(live.stream().map(Job::frame).toList());
                    t.stop(metrics.encoderTime);
                } catch (RuntimeException | Error ex) {
                    if (live.size() == 1) {
                        return new Job.Encoded(jobs, List.of(), ex);
                    }
                    e = encodeOneByOne(segmenter, live, ex);
                }
                // Failed streams' frames ride along without an embedding and are discarded.
                List<ImageEmbedding> all = new ArrayList<>(jobs.size());
                int k = 0;
                for (Job j : jobs) {
                    all.add(k < live.size() && live.get(k) == j ? e.get(k++) : null);
                }
                return new Job.Encoded(jobs, all, null);
            }, executor);
        });
    }

    /**
     * After a batch failed: each frame on its own, so that the frame at fault (a size the backend refuses,
     * say) fails its own stream and the other streams of the batch go on. A failure that is not the
     * frame's (the GPU is gone) then fails every stream, each with the error.
     */
    private static List<ImageEmbedding> encodeOneByOne(Segmenter segmenter, List<Job> live, Throwable batchError) {
        log.warn("a batch of {} frames failed to encode ({}): encoding its frames one by one", live.size(),
                Errors.describe(batchError));
        List<ImageEmbedding> out = new ArrayList<>(live.size());
        for (Job j : live) {
            try {
                out.add(segmenter.embed(List.of(j.frame())).get(0));
            } catch (RuntimeException | Error ex) {
                j.stream().fail(new IllegalStateException("encoding frame " + j.frame().index() + " failed: "
                        + Errors.describe(ex), ex));
                out.add(null);
            }
        }
        return out;
    }

    /**
     * Decoder: prompts (or tracks) to masks to records, one batch after the other on {@code executor}. A
     * stream's frames are decoded strictly in frame order (each frame's tracking prompts depend on the
     * previous frame's masks), but the k-th frames of all streams in a batch are independent: they form
     * wave k, whose objects go through one batched decoder call and one post-processing call
     * ({@link Wave}). Records leave in batch order. The batch's embeddings are closed (CUDA: their ring
     * slots recycled) once it is decoded.
     */
    static Flow<Job.Encoded, Job.Decoded, NotUsed> decoder(Segmenter segmenter, Executor executor, Executor waveHost,
            EngineMetrics.Gpu metrics) {
        return Flow.<Job.Encoded>create().mapAsync(1, batch -> CompletableFuture.supplyAsync(
                        () -> decodeBatch(segmenter, batch, waveHost, metrics), executor)
                .whenComplete((r, e) -> metrics.batchesInFlight.decrementAndGet())).mapConcat(list -> list);
    }

    /**
     * Memory mode (SAM 2.1): each frame of a batch, in order, is one step of its stream's
     * {@link io.samstream.stream.track.memory.MemoryTracker} (image encoder, memory attention, heads and memory encoder
     * per object), one batch at a time on {@code executor}; the streams' host work before and after the model's call
     * (the frame resized to the model's input, the masks brought to the frame's size) runs at once on {@code host}.
     * A frame that fails fails its stream only.
     */
    static Flow<List<Job>, Job.Decoded, NotUsed> memory(Executor executor, Executor host, EngineMetrics.Gpu metrics) {
        return Flow.<List<Job>>create().mapAsync(1, jobs -> {
            batchLeaves(jobs, metrics);
            return CompletableFuture.supplyAsync(() -> memoryBatch(jobs, host, metrics), executor)
                    .whenComplete((r, e) -> metrics.batchesInFlight.decrementAndGet());
        }).mapConcat(list -> list);
    }

    /**
     * Memory mode, before the batcher: each frame whose stream follows objects resized to the model's {@code side} x
     * {@code side} input, {@code parallelism} frames at once on {@code host}, in order. That is the costliest host
     * part of a step (a 1080p frame's Pillow resize), taken off the model's stage so it overlaps the GPU's work on
     * earlier batches. A frame this skips (its stream failed or follows nothing yet, its bytes unreadable) is
     * resized, or fails its stream, where it is prepared, as before. Each resize is timed as stage {@code model-input}.
     */
    static Flow<Job, Job, NotUsed> memoryInputs(int side, int parallelism, Executor host, EngineMetrics.Gpu metrics) {
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

    /** A batch left the batching queue for the model: its size, and each frame's wait since its capture. */
    static void batchLeaves(List<Job> jobs, EngineMetrics.Gpu metrics) {
        metrics.framesWaiting.addAndGet(-jobs.size());
        metrics.batchSize.record(jobs.size());
        metrics.batchesInFlight.incrementAndGet();
        Instant now = Instant.now();
        for (Job j : jobs) {
            metrics.stageTime("queue-wait").record(Duration.between(j.frame().capturedAt(), now));
        }
    }

    /**
     * A micro-batch in memory mode. Where the model batches (on a GPU), the whole micro-batch goes to it in one call:
     * each stream's frames in order (its consecutive frames: the image encoder runs batched over them, the memory
     * steps in frame order), each frame prepared by its stream's tracker before the call and its outcome read after.
     * A frame that finishing the stream's earlier frames could change ({@link MemoryTracker#prepareAhead}: new prompts,
     * a reset, a new size, an object about to be lost or forgotten) waits for a later call, after their finish; so the
     * outcome is the one stepping frame by frame gives. Preparing and finishing touch only the frame's stream, so the
     * streams of a call are prepared, and later finished, at once on {@code host}. A model that does not batch (the
     * CPU reference) takes the batch wave by wave (the k-th frame of every stream), one frame at a time. A frame that fails fails its stream only;
     * when a call is refused, its streams go through one by one so that only the stream at fault fails.
     * Each frame's model time is charged to its stream's {@link FairShare} when the batch is done.
     */
    private static List<Job.Decoded> memoryBatch(List<Job> jobs, Executor host, EngineMetrics.Gpu metrics) {
        long[] cost = new long[jobs.size()];
        try {
            return memorySteps(jobs, host, metrics, cost);
        } finally {
            for (int i = 0; i < jobs.size(); i++) {
                jobs.get(i).stream().share().done(cost[i]);
            }
        }
    }

    /** {@link #memoryBatch}'s steps; each frame's model time (nanoseconds) added to {@code cost}. */
    private static List<Job.Decoded> memorySteps(List<Job> jobs, Executor host, EngineMetrics.Gpu metrics,
                                                 long[] cost) {
        Job.Decoded[] out = new Job.Decoded[jobs.size()];
        Map<Object, java.util.ArrayDeque<Integer>> queues = new java.util.LinkedHashMap<>();
        for (int i = 0; i < jobs.size(); i++) {
            queues.computeIfAbsent(jobs.get(i).stream(), k -> new java.util.ArrayDeque<>()).add(i);
        }
        while (queues.values().stream().anyMatch(q -> !q.isEmpty())) {
            // Each stream's frames for this call, prepared on the host pool (streams at once, a stream's in order).
            List<Prepared> prepared = eachStream(host, queues.values().stream().filter(q -> !q.isEmpty()).toList(),
                    queue -> prepareStream(jobs, queue, out));
            List<Integer> toModel = new ArrayList<>();
            List<MemoryTracker.Pending> pending = new ArrayList<>();
            for (Prepared p : prepared) {
                toModel.addAll(p.toModel());
                pending.addAll(p.pending());
            }
            if (toModel.isEmpty()) {
                continue;
            }
            long t0 = System.nanoTime();
            long[] callCost = new long[toModel.size()];
            List<List<ObjectResult>> results = trackCall(jobs, toModel, pending, callCost);
            metrics.decoderTime.record((System.nanoTime() - t0) / toModel.size(), TimeUnit.NANOSECONDS);
            List<int[]> runs = new ArrayList<>(); // [from, to) of the call's frames, one stream's each
            for (int w = 0; w < toModel.size(); w++) {
                cost[toModel.get(w)] += callCost[w];
                out[toModel.get(w)] = new Job.Decoded(jobs.get(toModel.get(w)), null);
                if (w == 0 || jobs.get(toModel.get(w)).stream() != jobs.get(toModel.get(w - 1)).stream()) {
                    runs.add(new int[] {w, w + 1});
                } else {
                    runs.get(runs.size() - 1)[1] = w + 1;
                }
            }
            // Each stream's outcomes read on the host pool too (masks at the frame's size), a stream's in order.
            eachStream(host, runs, run -> {
                for (int w = run[0]; w < run[1]; w++) {
                    Job job = jobs.get(toModel.get(w));
                    if (results.get(w) == null || job.stream().failed()) {
                        continue;
                    }
                    try {
                        out[toModel.get(w)] = new Job.Decoded(job, job.stream().tracker(MemoryTracker.class)
                                .finish(pending.get(w), results.get(w)));
                    } catch (RuntimeException | Error ex) {
                        failFrame(job, ex);
                    }
                }
                return null;
            });
        }
        return List.of(out);
    }

    /** One stream's frames prepared for a call: their indices in the batch and what the model needs for each. */
    private record Prepared(List<Integer> toModel, List<MemoryTracker.Pending> pending) {}

    /**
     * The frames at the head of one stream's {@code queue} that can go to the next call, prepared in order (taken off
     * the queue); frames that need no model call, or whose stream failed, get their outcome in {@code out} here.
     * Touches only this stream's state, so streams are prepared at once.
     */
    private static Prepared prepareStream(List<Job> jobs, java.util.ArrayDeque<Integer> queue, Job.Decoded[] out) {
        List<Integer> toModel = new ArrayList<>();
        List<MemoryTracker.Pending> unfinished = new ArrayList<>();
        while (!queue.isEmpty()) {
            int i = queue.peek();
            Job job = jobs.get(i);
            if (job.stream().failed()) {
                out[i] = new Job.Decoded(job, null);
                queue.poll();
                continue;
            }
            try {
                MemoryTracker tracker = job.stream().tracker(MemoryTracker.class);
                if (!unfinished.isEmpty() && !tracker.model().batches()) {
                    break; // one frame of a stream per call: wave by wave
                }
                VideoFrame f = job.frame();
                StreamPrompts.Snapshot prompts = job.stream().prompts().take(f.index());
                MemoryTracker.Pending p = tracker.prepareAhead(unfinished, f.index(), f.width(), f.height(),
                        f.rgb(), job.modelInput(), prompts.trackPrompts(f.width(), f.height()));
                if (p == null) {
                    break; // after the stream's frames in this call are finished
                }
                queue.poll();
                if (p.done() != null) {
                    out[i] = new Job.Decoded(job, p.done());
                } else {
                    toModel.add(i);
                    unfinished.add(p);
                }
            } catch (RuntimeException | Error ex) {
                queue.poll();
                out[i] = new Job.Decoded(job, null);
                failFrame(job, ex);
            }
        }
        return new Prepared(toModel, unfinished);
    }

    /**
     * {@code work} for each of {@code parts} (one stream's each), at once on {@code host}, results in order; the
     * last part runs on the calling thread, and a single part runs there alone. The work catches its frames'
     * failures itself; anything else it throws is rethrown here (in a CompletionException), after every part is done.
     */
    private static <P, R> List<R> eachStream(Executor host, List<P> parts, java.util.function.Function<P, R> work) {
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
     * stream's frames in one call when the model batches, else frame by frame. Each frame's share of the time is
     * put in {@code cost} ({@link #apportion}).
     */
    private static List<List<ObjectResult>> trackCall(List<Job> jobs, List<Integer> toModel,
                                                      List<MemoryTracker.Pending> pending, long[] cost) {
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
                return timed(() -> trackStream(jobs, toModel, pending, model, 0, streams.size()), pending, 0, cost);
            }
            try {
                return timed(() -> model.track(streams, frames, prompts), pending, 0, cost);
            } catch (RuntimeException ex) {
                log.warn("memory mode: a batch of {} frames failed ({}); stepping the streams one by one",
                        streams.size(), ex.toString());
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
            out.addAll(timed(() -> trackStream(jobs, toModel, pending, model, f, t), pending, from, cost));
            from = to;
        }
        return out;
    }

    /** Runs {@code call} (for the frames from {@code from} on) and apportions its time among them. */
    private static List<List<ObjectResult>> timed(java.util.function.Supplier<List<List<ObjectResult>>> call,
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
     * (its object limit among the reasons): the stream's lost objects whose memory was kept make room, and the
     * frames are tried once more.
     */
    private static List<List<ObjectResult>> trackStream(List<Job> jobs, List<Integer> toModel,
                                                        List<MemoryTracker.Pending> pending, Sam2Tracking model,
                                                        int from, int to) {
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
            if (ex instanceof RuntimeException && model.batches()
                    && first.stream().tracker(MemoryTracker.class).forgetRemembered(pending.get(from)) > 0) {
                try {
                    return to - from == 1 ? List.of(streams.get(0).track(frames.get(0), prompts.get(0)))
                            : model.track(streams, frames, prompts);
                } catch (RuntimeException | Error again) {
                    fault = again;
                }
            }
            failFrame(first, fault);
            return new ArrayList<>(java.util.Collections.nCopies(to - from, null));
        }
    }

    /**
     * Records: each decoded frame's mask record, its masks run-length encoded (O(runs) per mask, the costly
     * host part of a frame), {@code parallelism} frames at once on {@code executor}, in order. Off the decoder's
     * path, so the next wave decodes meanwhile.
     */
    static Flow<Job.Decoded, Job.Outcome, NotUsed> records(Segmenter segmenter, int parallelism, Executor executor) {
        return Flow.<Job.Decoded>create().mapAsync(parallelism, d -> d.frame() == null
                ? CompletableFuture.completedFuture(new Job.Outcome(d.job(), null))
                : CompletableFuture.supplyAsync(() -> {
                    try {
                        return new Job.Outcome(d.job(), segmenter.record(d.job().frame(), d.frame().objects(),
                                d.frame().hidden(), d.frame().lost()));
                    } catch (RuntimeException | Error ex) {
                        failFrame(d.job(), ex);
                        return new Job.Outcome(d.job(), null);
                    }
                }, executor));
    }

    /** One batch, wave by wave; a frame that fails (even with an Error) fails its stream only. */
    static List<Job.Decoded> decodeBatch(Segmenter segmenter, Job.Encoded batch, Executor waveHost,
            EngineMetrics.Gpu metrics) {
        int n = batch.jobs().size();
        Job.Decoded[] out = new Job.Decoded[n];
        try {
            Map<StreamHandle, List<Integer>> byStream = new LinkedHashMap<>();
            for (int i = 0; i < n; i++) {
                byStream.computeIfAbsent(batch.jobs().get(i).stream(), h -> new ArrayList<>()).add(i);
            }
            int waves = byStream.values().stream().mapToInt(List::size).max().orElse(0);
            for (int k = 0; k < waves; k++) {
                List<Integer> wave = new ArrayList<>();
                for (List<Integer> frames : byStream.values()) {
                    if (k < frames.size()) {
                        wave.add(frames.get(k));
                    }
                }
                decodeWave(segmenter, batch, wave, out, waveHost, metrics);
            }
        } finally {
            for (ImageEmbedding e : batch.embeddings()) {
                if (e != null) {
                    e.close();
                }
            }
        }
        for (int i = 0; i < n; i++) {
            if (out[i] == null) {
                out[i] = new Job.Decoded(batch.jobs().get(i), null);
            }
        }
        return Arrays.asList(out);
    }

    /** One wave: each job's decoding step (kalman tracker or fixed prompts), run together, then the records. */
    private static void decodeWave(Segmenter segmenter, Job.Encoded batch, List<Integer> wave, Job.Decoded[] out,
            Executor waveHost, EngineMetrics.Gpu metrics) {
        long t0 = System.nanoTime();
        List<FrameStep> steps = new ArrayList<>(wave.size());
        List<Integer> stepJob = new ArrayList<>(wave.size());
        for (int i : wave) {
            Job job = batch.jobs().get(i);
            if (batch.error() != null) {
                job.stream().fail(new IllegalStateException("encoding failed: " + Errors.describe(batch.error()),
                        batch.error()));
            }
            ImageEmbedding embedding = batch.embeddings().isEmpty() ? null : batch.embeddings().get(i);
            if (embedding == null || job.stream().failed()) {
                continue;
            }
            try {
                VideoFrame f = job.frame();
                StreamPrompts.Snapshot prompts = job.stream().prompts().take(f.index());
                steps.add(job.stream().tracker(WaveTracker.class).begin(f.index(), f.width(), f.height(), embedding,
                        prompts.trackPrompts(f.width(), f.height())));
                stepJob.add(i);
            } catch (RuntimeException | Error ex) {
                failFrame(job, ex);
            }
        }
        if (steps.isEmpty()) {
            return;
        }
        Wave.Result r = Wave.run(segmenter.backend(), steps, waveHost);
        metrics.stageTime("decode").record(r.decodeNanos(), TimeUnit.NANOSECONDS);
        metrics.stageTime("postprocess").record(r.postprocessNanos(), TimeUnit.NANOSECONDS);
        for (int s = 0; s < steps.size(); s++) {
            Job job = batch.jobs().get(stepJob.get(s));
            Wave.Outcome o = r.outcomes().get(s);
            if (o.error() != null) {
                failFrame(job, o.error());
            } else {
                out[stepJob.get(s)] = new Job.Decoded(job, o.frame());
            }
        }
        metrics.decoderTime.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
    }

    static void failFrame(Job job, Throwable ex) {
        job.stream().fail(new IllegalArgumentException("frame " + job.frame().index() + ": " + Errors.describe(ex), ex));
    }

    /**
     * Publisher: hands each record to the sinks on its stream's lane (a stream's records leave in order;
     * different streams' are serialized at once) and waits for their acknowledgement, with at most
     * {@code pendingAcks} records unacknowledged at once (all GPUs together; the queue-depth gauges and the
     * ack stage time count them by their stream's GPU).
     */
    static Flow<Job.Outcome, Job.Outcome, NotUsed> publisher(FrameSink sink, int pendingAcks, SinkLanes lanes,
            EngineMetrics metrics) {
        return Flow.<Job.Outcome>create().mapAsync(pendingAcks, o -> {
            if (o.record() == null) {
                return CompletableFuture.completedFuture(o);
            }
            EngineMetrics.Gpu gpu = o.job().stream().gpuMeters();
            gpu.pendingAcks.incrementAndGet();
            long sent = System.nanoTime();
            CompletionStage<Void> acked = CompletableFuture.supplyAsync(() -> sink.accept(o.record(), o.job().frame()),
                    lanes.of(o.record().stream())).thenCompose(s -> s);
            return acked.handle((v, e) -> {
                gpu.pendingAcks.decrementAndGet();
                if (e != null) {
                    o.job().stream().fail(new IllegalStateException("publishing frame " + o.record().frame()
                            + " failed: " + Errors.describe(e), e));
                    return new Job.Outcome(o.job(), null);
                }
                gpu.stageTime("ack").record(System.nanoTime() - sent, TimeUnit.NANOSECONDS);
                Instant captured = o.job().frame().capturedAt();
                metrics.latency().record(Duration.between(captured, Instant.now()));
                return o;
            });
        });
    }
}
