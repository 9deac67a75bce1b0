package io.samstream.stream.http;

import akka.http.javadsl.model.HttpResponse;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.stream.engine.ClusterMember;
import io.samstream.stream.engine.Engine;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The probes. {@code /health/live}: the process works: the engine's actor system runs a task within
 * {@link #ANSWER_MILLIS}, its pipeline runs, and in a cluster its group loop has not stopped for good (an engine that
 * can no longer follow its group should be restarted). {@code /health/ready}: live, and the engine finished starting
 * (model loaded, streams added), its sinks are reachable ({@link SinkProbe}), and in a cluster it is a member of its
 * group with its partitions (not between losing and getting them back). 200 when up, 503 when down, each check named.
 */
final class Health {
    static final long ANSWER_MILLIS = 2000;

    private final Engine engine;
    private final BooleanSupplier started;
    private final SinkProbe sinks;
    private final boolean clustered;
    private final Supplier<Optional<ClusterMember>> cluster;

    /**
     * @param started   whether the engine finished starting (its configured streams added, its topics followed)
     * @param clustered whether {@code samstream.cluster} is on (then {@code cluster} gives its member once started)
     */
    Health(Engine engine, BooleanSupplier started, SinkProbe sinks, boolean clustered,
            Supplier<Optional<ClusterMember>> cluster) {
        this.engine = engine;
        this.started = started;
        this.sinks = sinks;
        this.clustered = clustered;
        this.cluster = cluster;
    }

    CompletionStage<HttpResponse> live() {
        return liveChecks().thenApply(checks -> answer(checks, checks.path("ok").asBoolean()));
    }

    CompletionStage<HttpResponse> ready() {
        return liveChecks().thenApply(checks -> {
            boolean ok = checks.path("ok").asBoolean();
            if (!started.getAsBoolean()) {
                checks.put("engine-started", "starting: the model is loaded, its streams and topics not yet");
                ok = false;
            } else {
                checks.put("engine-started", "up");
            }
            Optional<String> sinkProblem = sinks.problem();
            checks.put("sinks", sinkProblem.orElse("up"));
            ok &= sinkProblem.isEmpty();
            if (clustered) {
                Optional<ClusterMember> m = cluster.get();
                if (m.isEmpty()) {
                    checks.put("cluster", "not joined yet");
                    ok = false;
                } else {
                    ClusterMember.Membership s = m.get().membership();
                    if (!s.running() || !s.joined()) {
                        checks.put("cluster", !s.running() ? "out of the group: " + s.stoppedBy().orElse("its group loop"
                                + " stopped") : "out of the group: waiting for its partitions");
                        ok = false;
                    } else {
                        checks.put("cluster", "member of group with partitions " + s.partitions());
                    }
                }
            }
            return answer(checks, ok);
        });
    }

    /** The liveness checks, with "ok" for their verdict. */
    private CompletionStage<ObjectNode> liveChecks() {
        ObjectNode checks = Json.object();
        boolean[] ok = {true};
        if (engine.pipelineDone().toCompletableFuture().isDone()) {
            checks.put("pipeline", "stopped");
            ok[0] = false;
        } else {
            checks.put("pipeline", "up");
        }
        if (clustered && started.getAsBoolean()) {
            Optional<ClusterMember> m = cluster.get();
            if (m.isPresent() && !m.get().membership().running()) {
                checks.put("group-loop", "stopped: " + m.get().membership().stoppedBy().orElse("closed"));
                ok[0] = false;
            } else {
                checks.put("group-loop", "up");
            }
        }
        CompletableFuture<Boolean> answered;
        try {
            answered = CompletableFuture.supplyAsync(() -> true, engine.system().dispatcher());
        } catch (RuntimeException e) {
            answered = CompletableFuture.completedFuture(false);
        }
        return answered.completeOnTimeout(false, ANSWER_MILLIS, TimeUnit.MILLISECONDS).exceptionally(e -> false)
                .thenApply(a -> {
                    checks.put("actor-system", a ? "up" : "no answer within " + ANSWER_MILLIS + " ms");
                    checks.put("ok", ok[0] && a);
                    return checks;
                });
    }

    private static HttpResponse answer(ObjectNode checks, boolean ok) {
        checks.remove("ok");
        ObjectNode o = Json.object();
        o.put("status", ok ? "up" : "down");
        o.set("checks", checks);
        return Json.response(ok ? 200 : 503, o);
    }
}
