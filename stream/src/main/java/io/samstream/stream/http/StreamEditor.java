package io.samstream.stream.http;

import akka.http.javadsl.model.HttpResponse;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.config.ConfigException;
import io.samstream.config.StreamDefaults;
import io.samstream.config.StreamSpec;
import io.samstream.config.StreamSpecs;
import io.samstream.stream.engine.Engine;
import io.samstream.stream.engine.StreamDirectory;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * {@code PUT} and {@code DELETE /api/v1/streams/{id}}. A definition is the streams topic's value ({@code {"location",
 * "live"?, "decoder"?, "prompts"?}}), checked by the topic's own parser ({@link StreamSpecs#fromJson}) before anything
 * happens. With a streams topic it goes there (key = id; a delete is a tombstone), so the engines that follow the topic
 * (in a cluster: the one owning its partition) run it, as for any producer's definition: 202. Without one, this
 * engine adds, redefines or removes the stream itself: 201 (new), 200 (redefined), 204 (removed).
 */
final class StreamEditor {
    private static final List<String> KEYS = List.of("location", "live", "decoder", "prompts", "id");

    private final Engine engine;
    private final StreamDefaults defaults;
    private final Optional<TopicWriter> writer;
    private final Optional<String> topic;
    private final Optional<StreamDirectory> directory;
    private final Executor work;
    private final StreamViews views;

    StreamEditor(Engine engine, StreamDefaults defaults, Optional<TopicWriter> writer, Optional<String> topic,
            Optional<StreamDirectory> directory, Executor work, StreamViews views) {
        this.engine = engine;
        this.defaults = defaults;
        this.writer = writer;
        this.topic = topic;
        this.directory = directory;
        this.work = work;
        this.views = views;
    }

    CompletionStage<HttpResponse> put(String id, String json) {
        StreamSpec spec;
        try {
            spec = StreamSpecs.fromJson(id, json, defaults);
        } catch (ConfigException e) {
            return done(Json.error(400, e.getMessage(), fieldOf(e.getMessage())));
        }
        if (topic.isPresent()) {
            return relay(id, json, "defined");
        }
        boolean existed = engine.stream(id).isPresent();
        try {
            engine.add(spec);
        } catch (RuntimeException e) {
            return done(Json.error(503, "stream " + id + " was not started: " + e.getMessage(), null));
        }
        return done(Json.response(existed ? 200 : 201, views.stream(id).orElseGet(Json::object)));
    }

    CompletionStage<HttpResponse> delete(String id) {
        if (topic.isPresent()) {
            boolean known = engine.stream(id).isPresent() || directory.flatMap(d -> d.entry(id)).isPresent();
            if (!known) {
                return done(Json.error(404, "no stream '" + id + "' is defined on the topic " + topic.get(), "id"));
            }
            return relay(id, null, "deleted");
        }
        if (!engine.remove(id)) {
            return done(Json.error(404, "no stream '" + id + "' runs here", "id"));
        }
        return done(HttpResponse.create().withStatus(204));
    }

    private CompletionStage<HttpResponse> relay(String id, String value, String what) {
        return CompletableFuture.supplyAsync(() -> writer.orElseThrow().send(topic.get(), id, value), work)
                .thenCompose(f -> f)
                .thenApply(meta -> {
                    ObjectNode o = Json.object();
                    o.put("stream", id).put(what, true).put("via", "topic").put("topic", topic.get())
                            .put("partition", meta.partition()).put("offset", meta.offset())
                            .put("note", "the engines that follow the topic apply it");
                    return Json.response(202, o);
                })
                .exceptionally(e -> Json.error(503, "the streams topic " + topic.get() + " could not be written: "
                        + (e.getCause() != null ? e.getCause().getMessage() : e.getMessage()), null));
    }

    /** The definition's key an error names ("... location is missing" -> location), when it names one. */
    static String fieldOf(String message) {
        String m = message == null ? "" : message;
        java.util.regex.Matcher unknown = java.util.regex.Pattern.compile("unknown key '([A-Za-z0-9_.-]{1,64})'").matcher(m);
        if (unknown.find()) {
            return unknown.group(1);
        }
        int cut = m.indexOf("': ");
        String rest = cut >= 0 ? m.substring(cut + 3) : m;
        for (String k : KEYS) {
            if (rest.startsWith(k) || rest.contains(" " + k) || rest.contains("." + k) || rest.contains("'" + k + "'")) {
                return k;
            }
        }
        return "body";
    }

    private static CompletionStage<HttpResponse> done(HttpResponse r) {
        return CompletableFuture.completedFuture(r);
    }
}
