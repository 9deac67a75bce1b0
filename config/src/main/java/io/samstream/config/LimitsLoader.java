package io.samstream.config;

import com.typesafe.config.Config;
import java.util.List;

/** Reads {@code samstream.limits} and holds the configuration file's own streams to it. */
final class LimitsLoader {
    private static final String KEY = "samstream.limits";

    private LimitsLoader() {}

    static Limits load(Config config, String origin) {
        try {
            return new Limits(integer(config, "max-objects-per-stream", origin),
                    integer(config, "max-pending-changes", origin),
                    config.getLong(KEY + ".max-prompt-frame-ahead"),
                    bytes(config, "max-state-bytes", origin), bytes(config, "max-prompt-bytes", origin),
                    bytes(config, "max-definition-bytes", origin), config.getLong(KEY + ".max-stream-frames"),
                    integer(config, "max-concepts-per-stream", origin), integer(config, "max-concept-chars", origin));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(origin + ": " + e.getMessage(), e);
        }
    }

    /** The file's streams within the limits, else an error naming the stream, its count and the limit. */
    static void checkStreams(List<StreamSpec> streams, Limits limits, String origin) {
        for (StreamSpec s : streams) {
            String problem = limits.check(s);
            if (problem != null) {
                throw new ConfigException(origin + ": samstream.streams: " + problem);
            }
        }
    }

    private static int integer(Config config, String key, String origin) {
        long v = config.getLong(KEY + "." + key);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new ConfigException(origin + ": " + KEY + "." + key + " is out of range: " + v);
        }
        return (int) v;
    }

    private static int bytes(Config config, String key, String origin) {
        long v;
        try {
            v = config.getBytes(KEY + "." + key);
        } catch (com.typesafe.config.ConfigException.BadValue e) {
            throw new ConfigException(origin + ": " + KEY + "." + key + ": expected a size such as 900 KiB", e);
        }
        if (v > Integer.MAX_VALUE) {
            throw new ConfigException(origin + ": " + KEY + "." + key + " is out of range: " + v + " bytes");
        }
        return (int) v;
    }
}
