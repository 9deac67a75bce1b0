package io.samstream.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigList;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigValueType;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/** Reads and validates the engine's sections (streams, batching, pipeline, reconnect, sinks, metrics). */
final class EngineSectionsLoader {
    private static final String ROOT = "samstream";
    private static final Pattern TOPIC = Pattern.compile("[a-zA-Z0-9._-]{1,249}");

    private EngineSectionsLoader() {}

    record Sections(List<StreamSpec> streams, StreamDefaults streamDefaults, EngineSettings.Batching batching,
            EngineSettings.Pipeline pipeline, EngineSettings.Reconnect reconnect, EngineSettings.Sinks sinks,
            EngineSettings.Metrics metrics, Optional<String> streamsTopic, EngineSettings.Tracking tracking,
            EngineSettings.Discovery discovery) {}

    static Sections load(Config config, String origin) {
        StreamDefaults defaults = defaults(config, origin);
        return new Sections(streams(config, origin, defaults), defaults, batching(config, origin),
                pipeline(config, origin), reconnect(config, origin), sinks(config, origin), metrics(config, origin),
                streamsTopic(config, origin), tracking(config, origin), discovery(config, origin));
    }

    private static StreamDefaults defaults(Config config, String origin) {
        String key = ROOT + ".stream-defaults";
        String where = origin + ": " + key;
        Config c = config.getConfig(key);
        return new StreamDefaults(
                StreamSpec.Live.parse(String.valueOf(c.getValue("live").unwrapped()), where + ".live"),
                StreamSpec.Decoder.parse(c.getString("decoder"), where + ".decoder"),
                StreamSpecs.prompts(c.getConfig("prompts"), where + ".prompts"));
    }

    private static List<StreamSpec> streams(Config config, String origin, StreamDefaults defaults) {
        String key = ROOT + ".streams";
        if (config.getValue(key).valueType() != ConfigValueType.LIST) {
            throw new ConfigException(origin + ": " + key + " must be a list of stream objects");
        }
        ConfigList list = config.getList(key);
        List<StreamSpec> streams = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < list.size(); i++) {
            String where = origin + ": " + key + "[" + i + "]";
            if (list.get(i).valueType() != ConfigValueType.OBJECT) {
                throw new ConfigException(where + ": expected an object {id, location, live, decoder, prompts}");
            }
            StreamSpec s = StreamSpecs.parse(((ConfigObject) list.get(i)).toConfig(), where, defaults, Optional.empty());
            if (!ids.add(s.id())) {
                throw new ConfigException(where + ": stream id '" + s.id() + "' is used twice");
            }
            streams.add(s);
        }
        return streams;
    }

    private static EngineSettings.Batching batching(Config config, String origin) {
        int maxBatch = positive(config, ROOT + ".batching.max-batch", origin, 1024);
        Duration maxLatency = duration(config, ROOT + ".batching.max-latency", origin);
        if (maxLatency.isZero()) {
            throw new ConfigException(origin + ": " + ROOT + ".batching.max-latency must be positive");
        }
        return new EngineSettings.Batching(maxBatch, maxLatency);
    }

    private static EngineSettings.Pipeline pipeline(Config config, String origin) {
        return new EngineSettings.Pipeline(positive(config, ROOT + ".pipeline.in-flight", origin, 64),
                positive(config, ROOT + ".pipeline.pending-acks", origin, 1 << 16),
                positive(config, ROOT + ".pipeline.sink-threads", origin, 64));
    }

    private static EngineSettings.Reconnect reconnect(Config config, String origin) {
        String key = ROOT + ".reconnect";
        Duration min = duration(config, key + ".min-backoff", origin);
        Duration max = duration(config, key + ".max-backoff", origin);
        if (min.isZero() || max.compareTo(min) < 0) {
            throw new ConfigException(origin + ": " + key + ".min-backoff must be positive and at most "
                    + key + ".max-backoff (" + min + " / " + max + ")");
        }
        double random = config.getDouble(key + ".random-factor");
        if (random < 0 || random > 1) {
            throw new ConfigException(origin + ": " + key + ".random-factor must be in [0, 1], got " + random);
        }
        return new EngineSettings.Reconnect(min, max, random);
    }

    private static EngineSettings.Sinks sinks(Config config, String origin) {
        String key = ROOT + ".sinks";
        return new EngineSettings.Sinks(config.getBoolean(key + ".kafka"),
                optionalPath(config, key + ".jsonl-dir", origin), optionalPath(config, key + ".overlay-dir", origin));
    }

    private static EngineSettings.Metrics metrics(Config config, String origin) {
        return new EngineSettings.Metrics(config.getBoolean(ROOT + ".metrics.enabled"));
    }

    private static Optional<String> streamsTopic(Config config, String origin) {
        String key = ROOT + ".streams-topic";
        String topic = config.getString(key).trim();
        if (topic.isEmpty()) {
            return Optional.empty();
        }
        if (!TOPIC.matcher(topic).matches() || topic.equals(".") || topic.equals("..")) {
            throw new ConfigException(origin + ": " + key + ": '" + topic
                    + "' is not a valid Kafka topic name (1-249 of a-z A-Z 0-9 . _ -)");
        }
        return Optional.of(topic);
    }

    private static EngineSettings.Tracking tracking(Config config, String origin) {
        String key = ROOT + ".tracking";
        int lostAfter = positive(config, key + ".lost-after", origin, 10_000);
        int hiddenLostAfter = positive(config, key + ".hidden-lost-after", origin, 10_000);
        if (hiddenLostAfter < lostAfter) {
            throw new ConfigException(origin + ": " + key + ".hidden-lost-after must be at least " + key
                    + ".lost-after (" + lostAfter + "), got " + hiddenLostAfter);
        }
        int forgetAfter = atMost(config, key + ".memory-forget-after", origin, 100_000);
        int foundAfter = positive(config, key + ".memory-found-after", origin, 1_000);
        if (forgetAfter > 0 && foundAfter > forgetAfter) {
            throw new ConfigException(origin + ": " + key + ".memory-found-after (" + foundAfter + ") must be at most "
                    + key + ".memory-forget-after (" + forgetAfter + "): a lost object could never be found again");
        }
        return new EngineSettings.Tracking(config.getBoolean(key + ".enabled"), lostAfter,
                fraction(config, key + ".min-predicted-iou", origin),
                fraction(config, key + ".min-stability", origin),
                fraction(config, key + ".merge-iou", origin), hiddenLostAfter,
                similarity(config, key + ".min-appearance", origin),
                fraction(config, key + ".scene-cut-similarity", origin),
                atMost(config, key + ".reid-window", origin, 10_000),
                similarity(config, key + ".reid-appearance", origin),
                TrackingMode.parse(config.getString(key + ".mode"), origin + ": " + key + ".mode"),
                config.getBoolean(key + ".camera-motion"),
                nonNegative(config, key + ".reid-search", origin, 100),
                nonNegative(config, key + ".reid-search-speed", origin, 100), forgetAfter, foundAfter,
                positive(config, key + ".concepts.every-frames", origin,
                        EngineSettings.Tracking.MAX_CONCEPTS_EVERY_FRAMES));
    }

    /** A number from 0 to {@code max}. */
    private static double nonNegative(Config config, String key, String origin, double max) {
        double v = config.getDouble(key);
        if (!(v >= 0 && v <= max)) {
            throw new ConfigException(origin + ": " + key + " must be in [0, " + max + "], got " + v);
        }
        return v;
    }

    /** A cosine similarity: in [-1, 1]. */
    private static double similarity(Config config, String key, String origin) {
        double v = config.getDouble(key);
        if (!(v >= -1 && v <= 1)) {
            throw new ConfigException(origin + ": " + key + " must be in [-1, 1] (a cosine similarity), got " + v);
        }
        return v;
    }

    /** A count from 0 (off) to {@code max}. */
    private static int atMost(Config config, String key, String origin, int max) {
        int v = config.getInt(key);
        if (v < 0 || v > max) {
            throw new ConfigException(origin + ": " + key + " must be in [0, " + max + "], got " + v);
        }
        return v;
    }

    private static EngineSettings.Discovery discovery(Config config, String origin) {
        String key = ROOT + ".discovery";
        boolean enabled = config.getBoolean(key + ".enabled");
        if (enabled && !config.getBoolean(ROOT + ".tracking.enabled")) {
            throw new ConfigException(origin + ": " + key + ".enabled needs " + ROOT
                    + ".tracking.enabled (discovered objects become tracks)");
        }
        return new EngineSettings.Discovery(enabled, positive(config, key + ".interval", origin, 1_000_000),
                positive(config, key + ".points-per-side", origin, 128),
                fraction(config, key + ".pred-iou-threshold", origin),
                fraction(config, key + ".stability-threshold", origin),
                fraction(config, key + ".nms-iou", origin),
                positive(config, key + ".min-area", origin, Integer.MAX_VALUE),
                fraction(config, key + ".new-object-max-overlap", origin));
    }

    private static double fraction(Config config, String key, String origin) {
        double v = config.getDouble(key);
        if (!(v >= 0 && v <= 1)) {
            throw new ConfigException(origin + ": " + key + " must be in [0, 1], got " + v);
        }
        return v;
    }

    private static Optional<Path> optionalPath(Config config, String key, String origin) {
        String p = config.getString(key).trim();
        return p.isEmpty() ? Optional.empty() : Optional.of(ConfigLoader.path(p, key, origin));
    }

    private static int positive(Config config, String key, String origin, int max) {
        int v = config.getInt(key);
        if (v < 1 || v > max) {
            throw new ConfigException(origin + ": " + key + " must be 1 to " + max + ", got " + v);
        }
        return v;
    }

    private static Duration duration(Config config, String key, String origin) {
        try {
            Duration d = config.getDuration(key);
            if (d.isNegative()) {
                throw new ConfigException(origin + ": " + key + " must not be negative, got " + d);
            }
            return d;
        } catch (com.typesafe.config.ConfigException.BadValue e) {
            throw new ConfigException(origin + ": " + key + ": expected a duration such as 50ms or 2s", e);
        }
    }
}
