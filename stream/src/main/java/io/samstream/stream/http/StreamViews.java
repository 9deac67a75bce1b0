package io.samstream.stream.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.config.ConfigException;
import io.samstream.config.SafeText;
import io.samstream.config.StreamDefaults;
import io.samstream.config.StreamSpec;
import io.samstream.config.StreamSpecs;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.stream.engine.Engine;
import io.samstream.stream.engine.StreamDirectory;
import io.samstream.stream.engine.StreamHandle;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What {@code GET /api/v1/streams} and {@code GET /api/v1/streams/{id}} answer: each stream running on this engine
 * with its state, location (credentials masked: {@link SafeText#maskCredentials}), counts, live figures ({@link StreamFigures})
 * and objects (visible, hidden, lost); with a streams topic also the streams defined there that run elsewhere (the
 * engine that last ran them, from the state topic).
 */
final class StreamViews {
    private final Engine engine;
    private final StreamFigures figures;
    private final Optional<StreamDirectory> directory;
    private final Optional<String> engineName;
    private final StreamDefaults defaults;

    /**
     * @param engineName this engine's name in its cluster; empty when not clustered
     */
    StreamViews(Engine engine, StreamFigures figures, Optional<StreamDirectory> directory, Optional<String> engineName,
            StreamDefaults defaults) {
        this.engine = engine;
        this.figures = figures;
        this.directory = directory;
        this.engineName = engineName;
        this.defaults = defaults;
    }

    /** Every stream, by id: this engine's, then the topic's others. */
    ArrayNode all() {
        Map<String, ObjectNode> out = new TreeMap<>();
        for (StreamHandle h : engine.streams()) {
            out.put(h.id(), local(h));
        }
        directory.ifPresent(d -> d.entries().forEach((id, e) -> out.computeIfAbsent(id, x -> elsewhere(e))));
        ArrayNode a = Json.MAPPER.createArrayNode();
        out.values().forEach(a::add);
        return a;
    }

    Optional<ObjectNode> stream(String id) {
        Optional<StreamHandle> h = engine.stream(id);
        if (h.isPresent()) {
            return Optional.of(local(h.get()));
        }
        return directory.flatMap(d -> d.entry(id)).map(this::elsewhere);
    }

    /** Whether {@code id} runs here or is defined on the streams topic. */
    boolean known(String id) {
        return engine.stream(id).isPresent() || directory.flatMap(d -> d.entry(id)).isPresent();
    }

    private ObjectNode local(StreamHandle h) {
        StreamSpec spec = h.spec();
        StreamFigures.Snapshot f = figures.of(h.id());
        ObjectNode o = Json.object();
        o.put("id", h.id()).put("location", SafeText.maskCredentials(spec.location())).put("live", spec.isLive())
                .put("state", h.state().name().toLowerCase(Locale.ROOT)).put("here", true);
        engineName.ifPresentOrElse(n -> o.put("engine", n), () -> o.putNull("engine"));
        o.put("gpu", h.gpu());
        ObjectNode frames = o.putObject("frames");
        frames.put("decoded", h.decoded()).put("dropped", h.dropped()).put("published", h.published())
                .put("decode_errors", (long) engine.metrics().decodeErrorsCount(h.id()));
        o.put("fps", Math.round(f.fps() * 10) / 10.0);
        ObjectNode latency = o.putObject("latency_ms");
        number(latency, "p50", f.p50Millis());
        number(latency, "p99", f.p99Millis());
        if (f.last().isPresent()) {
            MaskRecord r = f.last().get();
            o.putObject("frame").put("index", r.frame()).put("width", r.width()).put("height", r.height())
                    .put("pts_ms", r.ptsMs()).put("captured_at", r.capturedAt().toString());
        } else {
            o.putNull("frame");
        }
        ArrayNode prompted = o.putArray("prompted");
        new java.util.TreeSet<>(h.promptedIds()).forEach(prompted::add);
        o.put("finds_concepts", h.findsConcepts());
        ArrayNode concepts = o.putArray("concepts");
        h.concepts().forEach(c -> concepts.add(c.text()));
        ArrayNode objects = o.putArray("objects");
        Map<Integer, MaskRecord.ObjectMask> masks = new TreeMap<>();
        f.last().ifPresent(r -> r.objects().forEach(m -> masks.put(m.id(), m)));
        new TreeMap<>(f.objects()).forEach((id, state) -> {
            ObjectNode j = objects.addObject();
            j.put("id", id).put("state", state.name().toLowerCase(Locale.ROOT)).put("colour", PreviewRenderer.colour(id));
            MaskRecord.ObjectMask m = masks.get(id);
            if (m != null) {
                j.putArray("box").add(m.box().x0()).add(m.box().y0()).add(m.box().x1()).add(m.box().y1());
                j.put("score", m.score()).put("area", m.area());
                if (m.concept() != null) {
                    j.put("concept", m.concept());
                }
            }
        });
        return o;
    }

    private ObjectNode elsewhere(StreamDirectory.Entry e) {
        ObjectNode o = Json.object();
        o.put("id", e.id());
        try {
            StreamSpec spec = StreamSpecs.fromJson(e.id(), e.definition(), defaults);
            o.put("location", SafeText.maskCredentials(spec.location())).put("live", spec.isLive());
            o.put("state", e.ended() ? "ended" : e.engine().isPresent() ? "elsewhere" : "defined");
        } catch (ConfigException ex) {
            o.putNull("location").putNull("live");
            o.put("state", "invalid");
        }
        o.put("here", false);
        e.engine().ifPresentOrElse(n -> o.put("engine", n), () -> o.putNull("engine"));
        return o;
    }

    private static void number(ObjectNode o, String key, double v) {
        if (Double.isFinite(v)) {
            o.put(key, Math.round(v * 10) / 10.0);
        } else {
            o.putNull(key);
        }
    }
}
