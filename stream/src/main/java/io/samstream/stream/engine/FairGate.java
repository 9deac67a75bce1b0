package io.samstream.stream.engine;

import akka.stream.Attributes;
import akka.stream.FlowShape;
import akka.stream.Inlet;
import akka.stream.Outlet;
import akka.stream.stage.AbstractInHandler;
import akka.stream.stage.AbstractOutHandler;
import akka.stream.stage.AsyncCallback;
import akka.stream.stage.GraphStage;
import akka.stream.stage.GraphStageLogic;

/**
 * A stream's gate to its lane's batcher: it asks its {@link FairShare.Member} before pulling the next frame, and
 * pulls only once allowed. Upstream of it a live stream's {@code conflate} keeps the newest frame meanwhile (the
 * older ones counted as dropped), and a file waits (backpressure), so a held-back stream slows only itself.
 */
final class FairGate<T> extends GraphStage<FlowShape<T, T>> {
    private final Inlet<T> in = Inlet.create("FairGate.in");
    private final Outlet<T> out = Outlet.create("FairGate.out");
    private final FlowShape<T, T> shape = FlowShape.of(in, out);
    private final FairShare.Member member;

    FairGate(FairShare.Member member) {
        this.member = member;
    }

    @Override
    public FlowShape<T, T> shape() {
        return shape;
    }

    @Override
    public GraphStageLogic createLogic(Attributes inheritedAttributes) {
        return new GraphStageLogic(shape) {
            private AsyncCallback<Boolean> woken;

            @Override
            public void preStart() {
                woken = createAsyncCallback(x -> askAndPull());
            }

            private void askAndPull() {
                if (isAvailable(out) && !hasBeenPulled(in) && !isClosed(in)
                        && member.tryGo(() -> woken.invoke(Boolean.TRUE))) {
                    pull(in);
                }
            }

            {
                setHandler(in, new AbstractInHandler() {
                    @Override
                    public void onPush() {
                        member.sent();
                        push(out, grab(in));
                    }
                });
                setHandler(out, new AbstractOutHandler() {
                    @Override
                    public void onPull() {
                        askAndPull();
                    }
                });
            }
        };
    }
}
