package io.samstream.stream.http;

import akka.http.javadsl.model.HttpResponse;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.stream.engine.Engine;
import io.samstream.stream.engine.PromptMessage;
import io.samstream.stream.engine.PromptRejected;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Where {@code POST /api/v1/streams/{id}/prompts} goes once its message is valid ({@link PromptMessage#parse}, the
 * topic's own validation). Without Kafka: straight to this engine's stream ({@link Engine#applyPrompt}). With Kafka: as
 * a message on the prompts topic, so that the engine that runs the stream applies it wherever it runs (every engine
 * reads the topic, or in a cluster the stream's owner); when the stream runs here the answer waits (up to
 * {@link #WAIT}) for this engine's outcome of that very message, so it says the frame the change applies from, or why
 * it was refused, exactly as for a message any producer sent. A stream that runs on another engine of the cluster
 * gets 202: the message is on the topic, its owner applies it.
 */
final class PromptRelay {
    static final Duration WAIT = Duration.ofSeconds(5);

    /** HTTP status and field for each rejection reason of {@link PromptRejected}. */
    private static final Map<String, Object[]> REJECTIONS = Map.ofEntries(
            Map.entry(PromptRejected.UNKNOWN_STREAM, new Object[] {404, "stream"}),
            Map.entry(PromptRejected.UNKNOWN_OBJECT, new Object[] {404, "object"}),
            Map.entry(PromptRejected.OBJECT_EXISTS, new Object[] {409, "object"}),
            Map.entry(PromptRejected.TOO_MANY_PENDING, new Object[] {429, "frame"}),
            Map.entry(PromptRejected.TOO_LARGE, new Object[] {413, "body"}),
            Map.entry(PromptRejected.MALFORMED_JSON, new Object[] {400, "body"}),
            Map.entry(PromptRejected.UNKNOWN_OP, new Object[] {400, "op"}),
            Map.entry(PromptRejected.MISSING_STREAM, new Object[] {400, "stream"}),
            Map.entry(PromptRejected.KEY_MISMATCH, new Object[] {400, "stream"}),
            Map.entry(PromptRejected.MISSING_OBJECT, new Object[] {400, "object"}),
            Map.entry(PromptRejected.MISSING_PROMPT, new Object[] {400, "points"}),
            Map.entry(PromptRejected.BAD_POINT, new Object[] {400, "points"}),
            Map.entry(PromptRejected.BAD_LABEL, new Object[] {400, "points"}),
            Map.entry(PromptRejected.TOO_MANY_POINTS, new Object[] {400, "points"}),
            Map.entry(PromptRejected.BAD_COORDINATE, new Object[] {400, "points"}),
            Map.entry(PromptRejected.BAD_BOX, new Object[] {400, "box"}),
            Map.entry(PromptRejected.BAD_FRAME, new Object[] {400, "frame"}),
            Map.entry(PromptRejected.OUTSIDE_FRAME, new Object[] {400, "points"}),
            Map.entry(PromptRejected.BAD_CONCEPT, new Object[] {400, "text"}),
            Map.entry(PromptRejected.CONCEPT_EXISTS, new Object[] {409, "text"}),
            Map.entry(PromptRejected.UNKNOWN_CONCEPT, new Object[] {404, "text"}),
            Map.entry(PromptRejected.CONCEPT_LIMIT, new Object[] {400, "text"}),
            Map.entry(PromptRejected.WRONG_MODEL, new Object[] {400, "op"}));

    private final Engine engine;
    private final Optional<TopicWriter> writer;
    private final String topic;
    private final PromptOutcomes outcomes;
    private final Executor work;
    private final boolean clustered;

    /**
     * @param writer    the control topics' producer; empty: no Kafka, prompts go to this engine directly
     * @param topic     the prompts topic
     * @param outcomes  this engine's outcomes of the topic's messages
     * @param work      where blocking calls (a producer's metadata wait) run
     * @param clustered whether the engine is one of a cluster (then a stream may run on another engine)
     */
    PromptRelay(Engine engine, Optional<TopicWriter> writer, String topic, PromptOutcomes outcomes, Executor work,
            boolean clustered) {
        this.engine = engine;
        this.writer = writer;
        this.topic = topic;
        this.outcomes = outcomes;
        this.work = work;
        this.clustered = clustered;
    }

    /**
     * Applies or relays a valid message.
     *
     * @param value       the message as it goes on the topic (its "stream" filled in from the path)
     * @param definedHere whether the stream is known at all (running here, or defined on the streams topic)
     */
    CompletionStage<HttpResponse> send(PromptMessage m, String value, boolean definedHere) {
        boolean runsHere = engine.stream(m.stream()).isPresent();
        if (!runsHere && !(clustered && definedHere)) {
            return CompletableFuture.completedFuture(Json.error(404, "no stream '" + m.stream() + "' runs"
                    + (clustered ? " in the cluster" : " here"), "stream", PromptRejected.UNKNOWN_STREAM));
        }
        if (writer.isEmpty()) {
            try {
                return CompletableFuture.completedFuture(applied(m, engine.applyPrompt(m), false));
            } catch (PromptRejected e) {
                return CompletableFuture.completedFuture(rejected(e));
            }
        }
        return CompletableFuture.supplyAsync(() -> writer.get().send(topic, m.stream(), value), work)
                .thenCompose(f -> f)
                .thenCompose(meta -> {
                    if (!runsHere) {
                        return CompletableFuture.completedFuture(queued(m, meta.partition(), meta.offset(),
                                "stream " + m.stream() + " runs on another engine of the cluster, which applies it"));
                    }
                    return outcomes.of(meta.partition(), meta.offset())
                            .orTimeout(WAIT.toMillis(), TimeUnit.MILLISECONDS)
                            .handle((o, e) -> {
                                if (e != null) {
                                    return queued(m, meta.partition(), meta.offset(), "not applied here within "
                                            + WAIT.toSeconds() + " s (the stream may have moved): its engine applies it");
                                }
                                return o.rejected() != null ? rejected(o.rejected()) : applied(m, o.from(), true);
                            });
                })
                .exceptionally(e -> {
                    Throwable c = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                            ? e.getCause() : e;
                    return Json.error(c instanceof TimeoutException ? 504 : 503, "the prompts topic " + topic
                            + " could not be written: " + c.getMessage(), null);
                });
    }

    private static HttpResponse applied(PromptMessage m, long from, boolean viaTopic) {
        ObjectNode o = describe(m);
        o.put("applied", true).put("frame", from).put("via", viaTopic ? "topic" : "engine");
        return Json.ok(o);
    }

    private HttpResponse queued(PromptMessage m, int partition, long offset, String note) {
        ObjectNode o = describe(m);
        o.put("applied", false).putNull("frame");
        o.put("via", "topic").put("topic", topic).put("partition", partition).put("offset", offset).put("note", note);
        return Json.response(202, o);
    }

    private static ObjectNode describe(PromptMessage m) {
        ObjectNode o = Json.object();
        o.put("stream", m.stream()).put("op", m.op().wireName());
        if (m.concept() != null) {
            o.put("text", m.concept().text());
        } else if (m.op() != PromptMessage.Op.RESET) {
            o.put("object", m.object());
        }
        return o;
    }

    /** A rejection as the API answers it: the reason's status and field, its words. */
    static HttpResponse rejected(PromptRejected e) {
        Object[] sf = REJECTIONS.getOrDefault(e.reason(), new Object[] {e.reason().equals("error") ? 500 : 400, null});
        return Json.error((Integer) sf[0], e.getMessage(), (String) sf[1], e.reason());
    }
}
