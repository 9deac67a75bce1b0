package io.samstream.stream.engine;

import akka.NotUsed;
import akka.stream.javadsl.Flow;
import io.micrometer.core.instrument.Timer;
import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.ObjectTracker;
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

/** The engine's pipeline stages after the merge, each a small flow with one job. */
final class Stages {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Stages.class);

    private Stages() {}

    /**
     * Encoder: at most {@code inFlight} batches at once on {@code executor}, in order. A batch that fails
     * fails the streams of its frames only.
     */
    static Flow<List<Job>, Job.Encoded, NotUsed> encoder(Segmenter segmenter, int inFlight, Executor executor,
            EngineMetrics metrics) {
        return Flow.<List<Job>>create().mapAsync(inFlight, jobs -> {
            metrics.framesWaiting().addAndGet(-jobs.size());
            metrics.batchSize().record(jobs.size());
            metrics.batchesInFlight().incrementAndGet();
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
                List<Tensor> e;
                try {
                    e = segmenter.encode(live.stream().map(Job::frame).toList());
                    t.stop(metrics.encoderTime());
                } catch (RuntimeException | Error ex) {
                    if (live.size() == 1) {
                        return new Job.Encoded(jobs, List.of(), ex);
                    }
                    e = encodeOneByOne(segmenter, live, ex);
                }
                // Failed streams' frames ride along without an embedding and are discarded.
                List<Tensor> all = new ArrayList<>(jobs.size());
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
    private static List<Tensor> encodeOneByOne(Segmenter segmenter, List<Job> live, Throwable batchError) {
        log.warn("a batch of {} frames failed to encode ({}): encoding its frames one by one", live.size(),
                Errors.describe(batchError));
        List<Tensor> out = new ArrayList<>(live.size());
        for (Job j : live) {
            try {
                out.add(segmenter.encode(List.of(j.frame())).get(0));
            } catch (RuntimeException | Error ex) {
                j.stream().fail(new IllegalStateException("encoding frame " + j.frame().index() + " failed: "
                        + Errors.describe(ex), ex));
                out.add(null);
            }
        }
        return out;
    }

    /**
     * Decoder: prompts (or tracks) to masks to records, up to {@code inFlight} batches at once on
     * {@code executor}. A stream's frames are decoded strictly one after the other, in frame order: each
     * batch hands each stream's frames to that stream's {@link SerialLane} (mapAsync calls this in batch
     * order, so a stream's frames of batch N are queued before those of batch N+1), while different
     * streams' lanes, and the encoder working on later batches, run at the same time. Records still leave
     * in batch order.
     */
    static Flow<Job.Encoded, Job.Outcome, NotUsed> decoder(Segmenter segmenter, int inFlight, Executor executor,
            EngineMetrics metrics) {
        return Flow.<Job.Encoded>create().mapAsync(inFlight, batch -> decodeInLanes(segmenter, batch, executor, metrics)
                .whenComplete((r, e) -> metrics.batchesInFlight().decrementAndGet())).mapConcat(list -> list);
    }

    /** One batch: each stream's frames in its own lane; the outcomes in the batch's order. */
    private static CompletableFuture<List<Job.Outcome>> decodeInLanes(Segmenter segmenter, Job.Encoded batch,
            Executor executor, EngineMetrics metrics) {
        int n = batch.jobs().size();
        Job.Outcome[] out = new Job.Outcome[n];
        Map<StreamHandle, List<Integer>> byStream = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            byStream.computeIfAbsent(batch.jobs().get(i).stream(), h -> new ArrayList<>()).add(i);
        }
        List<CompletableFuture<Void>> lanes = new ArrayList<>(byStream.size());
        for (Map.Entry<StreamHandle, List<Integer>> e : byStream.entrySet()) {
            lanes.add(e.getKey().decodeLane().submit(() -> {
                for (int i : e.getValue()) {
                    out[i] = decodeFrame(segmenter, batch, i, metrics);
                }
                return null;
            }, executor));
        }
        return CompletableFuture.allOf(lanes.toArray(CompletableFuture[]::new)).thenApply(v -> Arrays.asList(out));
    }

    /** One frame: a frame that fails (even with an Error) fails its stream only. */
    private static Job.Outcome decodeFrame(Segmenter segmenter, Job.Encoded batch, int i, EngineMetrics metrics) {
        Job job = batch.jobs().get(i);
        if (batch.error() != null) {
            job.stream().fail(new IllegalStateException("encoding failed: " + Errors.describe(batch.error()),
                    batch.error()));
        }
        Tensor embedding = batch.embeddings().isEmpty() ? null : batch.embeddings().get(i);
        if (embedding == null || job.stream().failed()) {
            return new Job.Outcome(job, null);
        }
        Timer.Sample t = Timer.start();
        try {
            VideoFrame f = job.frame();
            StreamPrompts.Snapshot prompts = job.stream().prompts().forFrame(f.index());
            ObjectTracker tracker = job.stream().tracker();
            MaskRecord r;
            if (tracker == null) {
                r = segmenter.decode(f, embedding, prompts.resolve(f.width(), f.height()));
            } else {
                ObjectTracker.Frame tracked = tracker.step(f.index(), f.width(), f.height(), embedding,
                        prompts.trackPrompts(f.width(), f.height()));
                r = segmenter.record(f, tracked.objects(), tracked.lost());
            }
            t.stop(metrics.decoderTime());
            return new Job.Outcome(job, r);
        } catch (RuntimeException | Error ex) {
            job.stream().fail(new IllegalArgumentException("frame " + job.frame().index() + ": "
                    + Errors.describe(ex), ex));
            return new Job.Outcome(job, null);
        }
    }

    /**
     * Publisher: hands each record to the sinks on {@code executor} (one thread: records leave in order) and
     * waits for their acknowledgement, with at most {@code pendingAcks} records unacknowledged at once.
     */
    static Flow<Job.Outcome, Job.Outcome, NotUsed> publisher(FrameSink sink, int pendingAcks, Executor executor,
            EngineMetrics metrics) {
        return Flow.<Job.Outcome>create().mapAsync(pendingAcks, o -> {
            if (o.record() == null) {
                return CompletableFuture.completedFuture(o);
            }
            metrics.pendingAcks().incrementAndGet();
            CompletionStage<Void> acked = CompletableFuture.supplyAsync(() -> sink.accept(o.record(), o.job().frame()),
                    executor).thenCompose(s -> s);
            return acked.handle((v, e) -> {
                metrics.pendingAcks().decrementAndGet();
                if (e != null) {
                    o.job().stream().fail(new IllegalStateException("publishing frame " + o.record().frame()
                            + " failed: " + Errors.describe(e), e));
                    return new Job.Outcome(o.job(), null);
                }
                Instant captured = o.job().frame().capturedAt();
                metrics.latency().record(Duration.between(captured, Instant.now()));
                return o;
            });
        });
    }
}
