package io.samstream.stream.engine;

import akka.stream.Attributes;
import akka.stream.FlowShape;
import akka.stream.Inlet;
import akka.stream.Outlet;
import akka.stream.stage.AbstractInHandler;
import akka.stream.stage.AbstractOutHandler;
import akka.stream.stage.GraphStage;
import akka.stream.stage.GraphStageLogic;
import akka.stream.stage.TimerGraphStageLogic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Micro-batching by deadline: a batch leaves when it is full, when its oldest element has waited
 * {@code maxLatency}, or at once when the pipeline behind it is idle ({@code idle}), since then waiting for
 * more frames only adds latency (one live stream: each frame goes alone; many streams: batches fill while
 * the GPU is busy). Backpressure: it takes no more elements while a full batch waits for demand.
 */
final class DeadlineBatcher<T> extends GraphStage<FlowShape<T, List<T>>> {
    private final int maxBatch;
    private final Duration maxLatency;
    private final BooleanSupplier idle;
    private final Inlet<T> in = Inlet.create("DeadlineBatcher.in");
    private final Outlet<List<T>> out = Outlet.create("DeadlineBatcher.out");
    private final FlowShape<T, List<T>> shape = FlowShape.of(in, out);

    DeadlineBatcher(int maxBatch, Duration maxLatency, BooleanSupplier idle) {
        if (maxBatch < 1) {
            throw new IllegalArgumentException("max batch must be at least 1, got " + maxBatch);
        }
        this.maxBatch = maxBatch;
        this.maxLatency = maxLatency;
        this.idle = idle;
    }

    @Override
    public FlowShape<T, List<T>> shape() {
        return shape;
    }

    @Override
    public GraphStageLogic createLogic(Attributes attributes) {
        return new TimerGraphStageLogic(shape) {
            private static final String DEADLINE = "deadline";
            private List<T> pending = new ArrayList<>();
            private boolean due;

            {
                setHandler(in, new AbstractInHandler() {
                    @Override
                    public void onPush() {
                        pending.add(grab(in));
                        if (pending.size() == 1) {
                            due = false;
                            scheduleOnce(DEADLINE, maxLatency);
                        }
                        emitIfReady();
                        pullIfRoom();
                    }

                    @Override
                    public void onUpstreamFinish() {
                        if (pending.isEmpty()) {
                            completeStage();
                        } else {
                            due = true;
                            emitIfReady();
                        }
                    }
                });
                setHandler(out, new AbstractOutHandler() {
                    @Override
                    public void onPull() {
                        emitIfReady();
                        pullIfRoom();
                    }
                });
            }

            @Override
            public void preStart() {
                pull(in);
            }

            @Override
            public void onTimer(Object key) {
                due = true;
                emitIfReady();
            }

            private void emitIfReady() {
                if (pending.isEmpty() || !isAvailable(out)) {
                    return;
                }
                if (pending.size() >= maxBatch || due || idle.getAsBoolean()) {
                    List<T> batch = pending;
                    pending = new ArrayList<>();
                    due = false;
                    cancelTimer(DEADLINE);
                    push(out, batch);
                    if (isClosed(in)) {
                        completeStage();
                    }
                }
            }

            private void pullIfRoom() {
                if (pending.size() < maxBatch && !isClosed(in) && !hasBeenPulled(in)) {
                    pull(in);
                }
            }
        };
    }
}
