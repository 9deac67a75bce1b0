package io.samstream.stream.engine;

import io.samstream.gpu.sam2.ObjectPrompt;
import io.samstream.gpu.sam2.ObjectResult;
import io.samstream.gpu.sam2.Sam2Tracking;
import io.samstream.stream.track.memory.MemoryTracker;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Supplier;

/**
 * A memory-mode round's model call ({@link MemoryRounds}): the whole round in one call where the model batches, and
 * when the model refuses it, stream by stream so that only the stream at fault fails; each frame's share of the time.
 */
final class MemoryCalls {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(MemoryCalls.class);

    private MemoryCalls() {}

    /**
     * The model's results for a call's prepared frames, in order (a stream's frames consecutive in the list, in
     * frame order); null for a frame whose stream failed. A call the model refuses goes stream by stream: each
     * stream's frames in one call when the model batches, else frame by frame; {@code settle} (every round called
     * before finished) runs first, so that a stream that makes room for its new objects does so as stepping frame by
     * frame would. Each frame's share of the time is put in {@code cost} ({@link #apportion}).
     */
    static List<List<ObjectResult>> trackCall(List<Job> jobs, List<Integer> toModel,
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
     * (its object limit among the reasons): the rounds before are finished ({@code settle}), the stream's lost objects
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
