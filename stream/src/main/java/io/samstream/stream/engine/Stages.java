package io.samstream.stream.engine;

import akka.NotUsed;
import akka.stream.javadsl.Flow;
import io.micrometer.core.instrument.Timer;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.stream.track.FrameStep;
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
