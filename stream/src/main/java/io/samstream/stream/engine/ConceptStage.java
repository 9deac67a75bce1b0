package io.samstream.stream.engine;

import akka.NotUsed;
import akka.stream.javadsl.Flow;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.stream.track.TrackedFrame;
import io.samstream.stream.track.concept.ConceptStreamTracker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The model stage of SAM 3's concept tracking (CPU): each frame of a micro-batch, in order, is one step of its
 * stream's {@link ConceptStreamTracker} with the concepts of the frame's prompts, one batch at a time on {@code
 * executor}. A frame that fails fails its stream only.
 */
final class ConceptStage {
    private ConceptStage() {}

    static Flow<List<Job>, Job.Decoded, NotUsed> flow(Executor executor, EngineMetrics.Gpu metrics) {
        return Flow.<List<Job>>create().mapAsync(1, jobs -> {
            Stages.batchLeaves(jobs, metrics);
            return CompletableFuture.supplyAsync(() -> batch(jobs, metrics), executor)
                    .whenComplete((r, e) -> metrics.batchesInFlight.decrementAndGet());
        }).mapConcat(list -> list);
    }

    private static List<Job.Decoded> batch(List<Job> jobs, EngineMetrics.Gpu metrics) {
        List<Job.Decoded> out = new ArrayList<>(jobs.size());
        for (Job job : jobs) {
            out.add(new Job.Decoded(job, step(job, metrics)));
        }
        return out;
    }

    /** One frame's objects, or null when its stream failed (now or before). */
    private static TrackedFrame step(Job job, EngineMetrics.Gpu metrics) {
        if (job.stream().failed()) {
            return null;
        }
        try {
            VideoFrame f = job.frame();
            StreamPrompts.Snapshot prompts = job.stream().prompts().take(f.index());
            long t0 = System.nanoTime();
            TrackedFrame frame = job.stream().tracker(ConceptStreamTracker.class).step(f.width(), f.height(), f.rgb(),
                    prompts.trackPrompts(f.width(), f.height()));
            metrics.decoderTime.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
            return frame;
        } catch (RuntimeException | Error ex) {
            Stages.failFrame(job, ex);
            return null;
        }
    }
}
