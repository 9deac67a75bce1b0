package io.samstream.stream.track;

import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.EmbeddingPool;
import io.samstream.gpu.model.SamBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the {@link FrameStep}s of independent frames together: all their prompt sets in one
 * {@link SamBackend#decodeWave}, all their chosen masks' appearance in one {@link SamBackend#poolEmbeddings}
 * and all their chosen masks in one {@link SamBackend#postprocessWave}. When a
 * shared call fails, each frame is tried on its own, so that the frame at fault (a prompt set the backend
 * refuses, say) fails alone and the others go on. The frames' own host work (choosing among the outputs;
 * the records' run-length encoding and the tracks' update) runs in parallel on the given executor: each
 * step is a different stream's, with state of its own.
 */
public final class Wave {
    private static final Logger log = LoggerFactory.getLogger(Wave.class);

    /** One frame's result: its objects and lost ids, or what failed it. */
    public record Outcome(TrackedFrame frame, Throwable error) {}

    /** The outcomes in the order of the steps, and the time spent in the two shared calls. */
    public record Result(List<Outcome> outcomes, long decodeNanos, long postprocessNanos) {}

    private Wave() {}

    /** One frame alone (a tracker stepping one frame, and the fixed-prompt decode). */
    public static TrackedFrame runOne(SamBackend backend, FrameStep step) {
        Outcome o = run(backend, List.of(step), Runnable::run).outcomes().get(0);
        if (o.error() instanceof RuntimeException r) {
            throw r;
        }
        if (o.error() instanceof Error e) {
            throw e;
        }
        if (o.error() != null) {
            throw new IllegalStateException(o.error());
        }
        return o.frame();
    }

    /** @param host runs the frames' host work (their {@code decoded} and {@code finish} steps), e.g. a pool */
    public static Result run(SamBackend backend, List<FrameStep> steps, Executor host) {
        int n = steps.size();
        Throwable[] errors = new Throwable[n];
        TrackedFrame[] frames = new TrackedFrame[n];

        // Decode: every frame's requests in one call.
        long t0 = System.nanoTime();
        List<List<SamBackend.DecodeRequest>> requests = new ArrayList<>(n);
        List<SamBackend.DecodeRequest> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            try {
                requests.add(steps.get(i).requests());
            } catch (RuntimeException | Error ex) {
                errors[i] = ex;
                requests.add(List.of());
            }
            all.addAll(requests.get(i));
        }
        List<List<DecoderOutput>> outputs = null;
        if (!all.isEmpty()) {
            try {
                outputs = backend.decodeWave(all);
            } catch (RuntimeException | Error ex) {
                if (n == 1) {
                    errors[0] = ex;
                } else {
                    log.warn("a wave of {} frames failed to decode ({}): decoding its frames one by one", n, ex.toString());
                }
            }
        }
        List<List<DecoderOutput>> decoded = outputs;
        int[] first = new int[n];
        for (int i = 1; i < n; i++) {
            first[i] = first[i - 1] + requests.get(i - 1).size();
        }
        each(n, errors, host, i -> steps.get(i).decoded(decoded != null
                ? decoded.subList(first[i], first[i] + requests.get(i).size())
                : requests.get(i).isEmpty() ? List.of() : backend.decodeWave(requests.get(i))));
        long t1 = System.nanoTime();

        // Appearance: every frame's chosen masks pooled over their embeddings in one call.
        pool(backend, steps, errors);

        // Post-process: every frame's chosen masks in one call.
        List<SamBackend.MaskRequest> masks = new ArrayList<>();
        int[] maskOf = new int[n];
        for (int i = 0; i < n; i++) {
            maskOf[i] = -1;
            if (errors[i] != null) {
                continue;
            }
            try {
                SamBackend.MaskRequest m = steps.get(i).masks();
                if (m != null) {
                    maskOf[i] = masks.size();
                    masks.add(m);
                }
            } catch (RuntimeException | Error ex) {
                errors[i] = ex;
            }
        }
        List<List<MaskSummary>> summaries = null;
        if (!masks.isEmpty()) {
            try {
                summaries = backend.postprocessWave(masks);
            } catch (RuntimeException | Error ex) {
                if (masks.size() == 1) {
                    errors[indexOf(maskOf, 0)] = ex;
                } else {
                    log.warn("post-processing the masks of {} frames failed ({}): one frame at a time", masks.size(),
                            ex.toString());
                }
            }
        }
        long t2 = System.nanoTime();
        List<List<MaskSummary>> summarized = summaries;
        each(n, errors, host, i -> frames[i] = steps.get(i).finish(maskOf[i] < 0 ? List.of()
                : summarized != null ? summarized.get(maskOf[i])
                : backend.postprocessWave(List.of(masks.get(maskOf[i]))).get(0)));
        List<Outcome> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(new Outcome(frames[i], errors[i]));
        }
        return new Result(out, t1 - t0, t2 - t1);
    }

    /** The steps' pooling requests in one {@link SamBackend#poolEmbeddings}; step by step when that fails. */
    private static void pool(SamBackend backend, List<FrameStep> steps, Throwable[] errors) {
        int n = steps.size();
        List<List<EmbeddingPool.Request>> requests = new ArrayList<>(n);
        List<EmbeddingPool.Request> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            List<EmbeddingPool.Request> r = List.of();
            if (errors[i] == null) {
                try {
                    r = steps.get(i).pools();
                } catch (RuntimeException | Error ex) {
                    errors[i] = ex;
                }
            }
            requests.add(r);
            all.addAll(r);
        }
        if (all.isEmpty()) {
            return;
        }
        List<float[]> descriptors = null;
        try {
            descriptors = backend.poolEmbeddings(all);
        } catch (RuntimeException | Error ex) {
            log.warn("pooling the appearance of {} masks failed ({}): one frame at a time", all.size(), ex.toString());
        }
        int at = 0;
        for (int i = 0; i < n; i++) {
            List<EmbeddingPool.Request> r = requests.get(i);
            if (r.isEmpty()) {
                continue;
            }
            try {
                steps.get(i).pooled(descriptors != null ? descriptors.subList(at, at + r.size())
                        : backend.poolEmbeddings(r));
            } catch (RuntimeException | Error ex) {
                errors[i] = ex;
            }
            at += r.size();
        }
    }

    /** Runs {@code work} for every step not failed yet, on {@code host}, and waits; a throw fails that step. */
    private static void each(int n, Throwable[] errors, Executor host, IntConsumer work) {
        List<CompletableFuture<Void>> running = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            if (errors[i] != null) {
                continue;
            }
            int step = i;
            running.add(CompletableFuture.runAsync(() -> {
                try {
                    work.accept(step);
                } catch (RuntimeException | Error ex) {
                    errors[step] = ex;
                }
            }, host));
        }
        CompletableFuture.allOf(running.toArray(CompletableFuture[]::new)).join();
    }

    private static int indexOf(int[] values, int v) {
        for (int i = 0; i < values.length; i++) {
            if (values[i] == v) {
                return i;
            }
        }
        throw new IllegalStateException("no frame has post-processing request " + v);
    }
}
