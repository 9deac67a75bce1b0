package io.samstream.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException.Missing;
import com.typesafe.config.ConfigException.WrongType;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigValue;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads {@code reference.conf}, an optional user file and system properties into a validated
 * {@link SamstreamConfig}. Every error names the key (and the file) at fault.
 */
public final class ConfigLoader {
    private static final String ROOT = "samstream";

    private ConfigLoader() {}

    /** Defaults plus system properties. */
    public static SamstreamConfig load() {
        return validate(ConfigFactory.load(), "reference.conf");
    }

    /** Defaults, overridden by {@code file}, overridden by system properties. */
    public static SamstreamConfig load(Path file) {
        if (!Files.isRegularFile(file)) {
            throw new ConfigException(file + ": configuration file not found");
        }
        Config user;
        try {
            user = ConfigFactory.parseFile(file.toFile(), ConfigParseOptions.defaults().setAllowMissing(false));
        } catch (com.typesafe.config.ConfigException e) {
            throw new ConfigException(file + ": " + e.getMessage(), e);
        }
        Config merged = ConfigFactory.defaultOverrides().withFallback(user).withFallback(ConfigFactory.defaultReference());
        return validate(merged.resolve(), file.toString());
    }

    /** Validates an already merged config (tests and embedders build their own). */
    public static SamstreamConfig validate(Config config, String origin) {
        rejectUnknownKeys(config, origin);
        try {
            String checkpoint = config.getString(ROOT + ".model.checkpoint").trim();
            Device device = Device.parse(config.getString(ROOT + ".device"), origin + ": " + ROOT + ".device");
            int threads = config.getInt(ROOT + ".cpu.threads");
            if (threads < 0) {
                throw new ConfigException(origin + ": " + ROOT + ".cpu.threads must be 0 (all cores) or positive, got "
                        + threads);
            }
            int resolved = threads == 0 ? Runtime.getRuntime().availableProcessors() : threads;
            EngineSectionsLoader.Sections engine = EngineSectionsLoader.load(config, origin);
            return new SamstreamConfig(checkpoint.isEmpty() ? Optional.empty() : Optional.of(Path.of(checkpoint)),
                    device, resolved, engine.streams(), engine.streamDefaults(), engine.batching(),
                    engine.pipeline(), engine.reconnect(), engine.sinks(), engine.metrics(), engine.streamsTopic());
        } catch (WrongType | Missing e) {
            throw new ConfigException(origin + ": " + e.getMessage(), e);
        }
    }

    /** A misspelt key would otherwise be silently ignored; name it instead. */
    private static void rejectUnknownKeys(Config config, String origin) {
        if (!config.hasPath(ROOT)) {
            return;
        }
        Config known = ConfigFactory.defaultReference().getConfig(ROOT);
        Set<Map.Entry<String, ConfigValue>> entries = config.getConfig(ROOT).entrySet();
        for (Map.Entry<String, ConfigValue> e : entries) {
            if (!known.hasPathOrNull(e.getKey())) {
                throw new ConfigException(origin + ": unknown key " + ROOT + "." + e.getKey()
                        + " (reference.conf documents every key)");
            }
        }
    }

}
