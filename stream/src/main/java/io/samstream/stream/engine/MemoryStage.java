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
import io.samstream.connectors.video.VideoFrame;
import io.samstream.stream.track.memory.MemoryTracker;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * Memory mode's model stage (SAM 2.1): each frame of a micro-batch is one step of its stream's {@link MemoryTracker}
 * (image encoder, memory attention, heads and memory encoder per object). A step is three parts:
 * <ol>
 *   <li><b>prepare</b> (host, the stream's bookkeeping: prompts, resets, what the model follows);</li>
 *   <li>the model's <b>call</b>, one for a whole round of frames where the model batches (on a GPU);</li>
 *   <li><b>finish</b>: each object's mask brought to the frame's size and summarized (the costly host part), then the
 *       stream's bookkeeping (hidden, lost, found again).</li>
 * </ol>
 * The rounds are pipelined ({@link MemoryRounds}): round N is finished on the {@code host} pool while the model runs
 * round N+1 on the stage's thread. Round N+1 may therefore hold a frame whose stream's frames in round N are not
 * finished yet: only where {@link MemoryTracker#prepareAhead} says their finish cannot change it (nor touch the
 * objects the call steps); otherwise the frame waits for a later round. So each stream's outcome is the one stepping
 * frame by frame gives. The calls and their fallbacks are {@link MemoryCalls}'.
 *
 * <p>The stage asks its upstream (the micro-batcher) for a batch when the model is free: after the last call of the
 * batch before. A batch's frames leave, in batch order, once all of them are finished. A frame that fails fails its
 * stream only; when a call is refused, its streams go through one by one so that only the stream at fault fails.
 * Each frame's model time is charged to its stream's {@link FairShare} when its batch leaves.
 */
final class MemoryStage extends GraphStage<FlowShape<List<Job>, List<Job.Decoded>>> {
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
            private final MemoryRounds rounds = new MemoryRounds(executor, host, metrics, () -> free.invoke(true),
                    done::invoke, failed::invoke);

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
}
