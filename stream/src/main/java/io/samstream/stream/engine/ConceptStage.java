package io.samstream.stream.engine;

import akka.NotUsed;
import akka.stream.javadsl.Flow;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.sam3.video.Sam3VideoTracker;
import io.samstream.stream.track.TrackedFrame;
import io.samstream.stream.track.concept.ConceptStreamTracker;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The model stage of SAM 3's concept tracking: each frame of a micro-batch is one step of its stream's {@link
 * ConceptStreamTracker} with the concepts of the frame's prompts, one batch at a time on {@code executor}. Within a
 * batch a stream's frames step in order and different streams side by side, in up to {@link #SIDE_BY_SIDE} lanes
 * (the first on the batch's thread, the others on {@code streams}), so that one stream's CPU work overlaps another's
 * GPU passes; the batch ends when every lane has. A frame that fails fails its stream only.
 */
final class ConceptStage {
    /**
     * Lanes of streams stepping at once. The GPU parts take one pass at a time, so a few lanes already keep the GPU busy
     * while the others do their CPU work; each lane holds a frame's host features (hundreds of MB at the release
     * shapes), so more would only cost memory.
     */
    static final int SIDE_BY_SIDE = 4;

    private ConceptStage() {}

    /** @param streams runs a batch's further streams (blocking work: the engine's blocking dispatcher) */
    static Flow<List<Job>, Job.Decoded, NotUsed> flow(Executor executor, Executor streams, EngineMetrics.Gpu metrics) {
        return Flow.<List<Job>>create().mapAsync(1, jobs -> {
            Stages.batchLeaves(jobs, metrics);
            return CompletableFuture.supplyAsync(() -> batch(jobs, streams, metrics), executor)
                    .whenComplete((r, e) -> metrics.batchesInFlight.decrementAndGet());
        }).mapConcat(list -> list);
    }

    /**
     * The batch's frames stepped, a stream's in order, streams side by side in up to {@link #SIDE_BY_SIDE} lanes (a
     * stream's frames all in one lane); the outputs in the batch's order.
     */
    static List<Job.Decoded> batch(List<Job> jobs, Executor streams, EngineMetrics.Gpu metrics) {
        List<Object> owners = new ArrayList<>(jobs.size());
        for (Job job : jobs) {
            owners.add(job.stream());
        }
        List<List<Integer>> lanes = lanes(owners, SIDE_BY_SIDE);
        TrackedFrame[] frames = new TrackedFrame[jobs.size()];
        List<CompletableFuture<Void>> others = new ArrayList<>();
        for (List<Integer> lane : lanes.subList(Math.min(1, lanes.size()), lanes.size())) {
            others.add(CompletableFuture.runAsync(() -> steps(jobs, lane, frames, metrics, null), streams));
        }
        if (!lanes.isEmpty()) {
            steps(jobs, lanes.get(0), frames, metrics, lanes.size() == 1 ? streams : null);
        }
        others.forEach(CompletableFuture::join);
        List<Job.Decoded> out = new ArrayList<>(jobs.size());
        for (int i = 0; i < jobs.size(); i++) {
            out.add(new Job.Decoded(jobs.get(i), frames[i]));
        }
        return out;
    }

    /**
     * The indexes of {@code owners} (a batch's jobs' streams, by identity) in lanes: the k-th distinct owner's in lane
     * k mod {@code max}, each lane in the batch's order.
     */
    static List<List<Integer>> lanes(List<?> owners, int max) {
        Map<Object, Integer> laneOf = new IdentityHashMap<>();
        List<List<Integer>> lanes = new ArrayList<>();
        for (int i = 0; i < owners.size(); i++) {
            int lane = laneOf.computeIfAbsent(owners.get(i), s -> laneOf.size() % max);
            while (lanes.size() <= lane) {
                lanes.add(new ArrayList<>());
            }
            lanes.get(lane).add(i);
        }
        return lanes;
    }

    /**
     * A lane's frames in order. With {@code ahead} (a batch of one lane: one stream), when the next frame is the same
     * stream's, its image features are made ahead on {@code ahead} while this one steps ({@link
     * ConceptStreamTracker#encode}), so that the stream's CPU work overlaps GPU work as several lanes overlap one
     * another's. Only then: several lanes already do, and each frame made ahead holds a second frame's features on
     * the device, whose ring the lanes share.
     */
    private static void steps(List<Job> jobs, List<Integer> lane, TrackedFrame[] frames, EngineMetrics.Gpu metrics,
            Executor ahead) {
        CompletableFuture<Sam3VideoTracker.Encoded> next = null;
        for (int k = 0; k < lane.size(); k++) {
            Job job = jobs.get(lane.get(k));
            CompletableFuture<Sam3VideoTracker.Encoded> mine = next;
            next = ahead != null && k + 1 < lane.size() ? encodeAhead(job, jobs.get(lane.get(k + 1)), ahead) : null;
            frames[lane.get(k)] = step(job, mine, metrics);
        }
    }

    /** {@code following}'s features made on {@code ahead} when it is {@code job}'s stream's next frame; else null. */
    private static CompletableFuture<Sam3VideoTracker.Encoded> encodeAhead(Job job, Job following, Executor ahead) {
        if (following.stream() != job.stream() || job.stream().failed()) {
            return null;
        }
        VideoFrame f = following.frame();
        return CompletableFuture.supplyAsync(() -> job.stream().tracker(ConceptStreamTracker.class)
                .encode(f.width(), f.height(), f.rgb()), ahead);
    }

    /**
     * One frame's objects, or null when its stream failed (now or before); {@code ahead} its features made ahead (may
     * be null; one that failed is made again here, one of a failed stream released).
     */
    private static TrackedFrame step(Job job, CompletableFuture<Sam3VideoTracker.Encoded> ahead,
            EngineMetrics.Gpu metrics) {
        Sam3VideoTracker.Encoded encoded = ahead == null ? null : ahead.exceptionally(e -> null).join();
        if (job.stream().failed()) {
            if (encoded != null) {
                encoded.close();
            }
            return null;
        }
        try {
            VideoFrame f = job.frame();
            StreamPrompts.Snapshot prompts = job.stream().prompts().take(f.index());
            long t0 = System.nanoTime();
            TrackedFrame frame = job.stream().tracker(ConceptStreamTracker.class).step(f.width(), f.height(), f.rgb(),
                    prompts.trackPrompts(f.width(), f.height()), encoded);
            metrics.decoderTime.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
            return frame;
        } catch (RuntimeException | Error ex) {
            if (encoded != null) {
                encoded.close(); // a no-op when the step took its features
            }
            Stages.failFrame(job, ex);
            return null;
        }
    }
}
