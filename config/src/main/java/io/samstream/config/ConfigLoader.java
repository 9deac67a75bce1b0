package io.samstream.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Reads {@code reference.conf}, an optional user file and system properties into a validated
 * {@link SamstreamConfig}. Every error names the key (and the file) at fault.
 */
public final class ConfigLoader {
    private static final String ROOT = "samstream";
    private static final String KAFKA = ROOT + ".kafka";
    /** Which GPUs the CUDA backend runs on. */
    static final String GPUS_KEY = ROOT + ".gpus";
    /** Free-form: Kafka's own producer properties, checked by Kafka (and the mask sink), not here. */
    private static final String PRODUCER = "kafka.producer";
    /** Free-form: properties of every Kafka client (security and the like), checked by Kafka. */
    private static final String CLIENT = "kafka.client";
    /** Kafka's rule for topic names. */
    private static final Pattern TOPIC = Pattern.compile("[a-zA-Z0-9._-]{1,249}");
    private static final Pattern HOST_PORT = Pattern.compile("\\[?[A-Za-z0-9._:-]+]?:(\\d{1,5})");
    /** Producer properties that have a key of their own, or that the mask sink sets itself. */
    private static final Map<String, String> PRODUCER_PROPERTIES_SET_ELSEWHERE = Map.of(
            "bootstrap.servers", "set " + KAFKA + ".bootstrap-servers instead",
            "compression.type", "set " + KAFKA + ".compression instead",
            "key.serializer", "the mask sink writes keys itself",
            "value.serializer", "the mask sink writes values itself");
    /** Client properties that have a key of their own, or that each client sets itself. */
    private static final Map<String, String> CLIENT_PROPERTIES_SET_ELSEWHERE = Map.of(
            "bootstrap.servers", "set " + KAFKA + ".bootstrap-servers instead",
            "client.id", "each client of the engine names itself",
            "group.id", "set " + ROOT + ".cluster.group instead",
            "group.instance.id", "set " + ROOT + ".cluster.instance-id instead",
            "key.serializer", "each client sets its own",
            "value.serializer", "each client sets its own",
            "key.deserializer", "each client sets its own",
            "value.deserializer", "each client sets its own");

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
        } catch (IllegalArgumentException e) {
            // Typesafe Config's tokenizer passes a unicode escape with a sign (backslash, u, -cde) to Character.toChars.
            throw new ConfigException(file + ": a bad escape (" + e.getMessage() + ")", e);
        }
        Config merged;
        try {
            // Merging and resolving can fail too: substitutions, or a value concatenated with a list.
            merged = ConfigFactory.defaultOverrides().withFallback(user).withFallback(ConfigFactory.defaultReference())
                    .resolve();
        } catch (com.typesafe.config.ConfigException e) {
            throw new ConfigException(file + ": " + e.getMessage(), e);
        }
        return validate(merged, file.toString());
    }

    /** Validates an already merged config (tests and embedders build their own). */
    public static SamstreamConfig validate(Config config, String origin) {
        try {
            rejectUnknownKeys(config, origin); // `samstream = 5` fails here, as WrongType
            String checkpoint = config.getString(ROOT + ".model.checkpoint").trim();
            Device device = Device.parse(config.getString(ROOT + ".device"), origin + ": " + ROOT + ".device");
            int threads = config.getInt(ROOT + ".cpu.threads");
            if (threads < 0) {
                throw new ConfigException(origin + ": " + ROOT + ".cpu.threads must be 0 (all cores) or positive, got "
                        + threads);
            }
            int resolved = threads == 0 ? Runtime.getRuntime().availableProcessors() : threads;
            EngineSectionsLoader.Sections engine = EngineSectionsLoader.load(config, origin);
            Limits limits = LimitsLoader.load(config, origin);
            LimitsLoader.checkStreams(engine.streams(), limits, origin);
            ModelSparsity sparsity = ModelSparsity.parse(config.getString(ROOT + ".model.sparsity"),
                    config.getString(ROOT + ".model.sparse-layers"), origin + ": " + ROOT + ".model.sparsity",
                    origin + ": " + ROOT + ".model.sparse-layers");
            KafkaSettings kafka = kafka(config, origin);
            GpuSelection gpus = GpuSelection.parse(config.getValue(GPUS_KEY), origin + ": " + GPUS_KEY);
            return new SamstreamConfig(checkpoint.isEmpty() ? Optional.empty()
                    : Optional.of(path(checkpoint, ROOT + ".model.checkpoint", origin)),
                    device, resolved, kafka, engine.streams(), engine.streamDefaults(),
                    engine.batching(), engine.pipeline(), engine.reconnect(), engine.sinks(), engine.metrics(),
                    engine.streamsTopic(), engine.tracking(), engine.discovery(), sparsity,
                    cluster(config, origin, kafka, engine.streamsTopic()), gpus,
                    new CudaSettings(config.getBoolean(ROOT + ".cuda.graphs"),
                            config.getBoolean(ROOT + ".cuda.decoder-graphs"), precision(config, origin, sparsity)),
                            limits, HttpSettingsLoader.load(config, origin), shutdownTimeout(config, origin));
        } catch (com.typesafe.config.ConfigException e) { // WrongType, Missing, BadValue, NotResolved, ...
            throw new ConfigException(origin + ": " + e.getMessage(), e);
        }
    }

    /** samstream.shutdown-timeout: 1 s to 10 min. */
    private static java.time.Duration shutdownTimeout(Config config, String origin) {
        String key = ROOT + ".shutdown-timeout";
        java.time.Duration d = config.getDuration(key);
        if (d.compareTo(SamstreamConfig.MIN_SHUTDOWN_TIMEOUT) < 0 || d.compareTo(SamstreamConfig.MAX_SHUTDOWN_TIMEOUT) > 0) {
            throw new ConfigException(origin + ": " + key + " must be 1 s to 10 min, got " + config.getString(key));
        }
        return d;
    }

    /** samstream.model.precision; FP8 with 2:4 sparsity is refused (no sparse e4m3 kernel yet). */
    private static ModelPrecision precision(Config config, String origin, ModelSparsity sparsity) {
        String key = ROOT + ".model.precision";
        ModelPrecision p = ModelPrecision.parse(config.getString(key), origin + ": " + key);
        if (p == ModelPrecision.FP8 && sparsity.twoFour()) {
            throw new ConfigException(origin + ": " + key + " = fp8 cannot be combined with " + ROOT
                    + ".model.sparsity = 2:4 yet (no sparse FP8 kernel): use bf16 with 2:4, or fp8 with none");
        }
        return p;
    }

    private static KafkaSettings kafka(Config config, String origin) {
        String servers = config.getString(KAFKA + ".bootstrap-servers").trim();
        if (!servers.isEmpty()) {
            for (String server : servers.split(",", -1)) {
                var m = HOST_PORT.matcher(server.trim());
                if (!m.matches() || Integer.parseInt(m.group(1)) < 1 || Integer.parseInt(m.group(1)) > 65535) {
                    throw new ConfigException(origin + ": " + KAFKA + ".bootstrap-servers: '" + server.trim()
                            + "' is not host:port (a list is comma-separated; empty starts the embedded broker)");
                }
            }
        }
        String masks = topic(config, "masks-topic", origin);
        String prompts = topic(config, "prompts-topic", origin);
        if (masks.equals(prompts)) {
            throw new ConfigException(origin + ": " + KAFKA + ".masks-topic and " + KAFKA
                    + ".prompts-topic must differ, both are '" + masks + "'");
        }
        Optional<String> deadLetter = Optional.empty();
        if (!config.getString(KAFKA + ".prompts-dead-letter-topic").trim().isEmpty()) {
            String dlt = topic(config, "prompts-dead-letter-topic", origin);
            if (dlt.equals(masks) || dlt.equals(prompts)) {
                throw new ConfigException(origin + ": " + KAFKA + ".prompts-dead-letter-topic must differ from "
                        + KAFKA + ".masks-topic and " + KAFKA + ".prompts-topic, it is '" + dlt + "'");
            }
            deadLetter = Optional.of(dlt);
        }
        KafkaSettings.Compression compression = KafkaSettings.Compression.parse(
                config.getString(KAFKA + ".compression"), origin + ": " + KAFKA + ".compression");
        Map<String, String> client = clientProperties(config.getConfig(ROOT + "." + CLIENT), CLIENT,
                CLIENT_PROPERTIES_SET_ELSEWHERE, origin);
        String protocol = client.getOrDefault("security.protocol", "PLAINTEXT");
        if (servers.isEmpty() && !protocol.equalsIgnoreCase("PLAINTEXT")) {
            throw new ConfigException(origin + ": " + KAFKA + ".client.security.protocol = " + protocol
                    + " needs " + KAFKA + ".bootstrap-servers: the embedded broker listens in plain text only");
        }
        String brokerDir = config.getString(KAFKA + ".embedded-broker-dir").trim();
        return new KafkaSettings(servers.isEmpty() ? Optional.empty() : Optional.of(servers), masks, prompts,
                deadLetter, compression,
                clientProperties(config.getConfig(ROOT + "." + PRODUCER), PRODUCER, PRODUCER_PROPERTIES_SET_ELSEWHERE, origin),
                client, brokerDir.isEmpty() ? Optional.empty() : Optional.of(path(brokerDir, KAFKA + ".embedded-broker-dir",
                        origin)));
    }

    private static final String CLUSTER = ROOT + ".cluster";
    /** Kafka's rule for group.instance.id (and group ids we accept). */
    private static final Pattern MEMBER = Pattern.compile("[a-zA-Z0-9._-]{1,249}");

    private static ClusterSettings cluster(Config config, String origin, KafkaSettings kafka,
            Optional<String> streamsTopic) {
        boolean enabled = config.getBoolean(CLUSTER + ".enabled");
        String group = config.getString(CLUSTER + ".group").trim();
        if (!MEMBER.matcher(group).matches()) {
            throw new ConfigException(origin + ": " + CLUSTER + ".group: '" + group
                    + "' is not a valid consumer group id (1-249 of a-z A-Z 0-9 . _ -)");
        }
        String instance = config.getString(CLUSTER + ".instance-id").trim();
        if (!instance.isEmpty() && !MEMBER.matcher(instance).matches()) {
            throw new ConfigException(origin + ": " + CLUSTER + ".instance-id: '" + instance
                    + "' is not a valid group.instance.id (1-249 of a-z A-Z 0-9 . _ -; empty: the host name)");
        }
        int partitions = config.getInt(CLUSTER + ".partitions");
        if (partitions < 1 || partitions > 10_000) {
            throw new ConfigException(origin + ": " + CLUSTER + ".partitions must be 1-10000, got " + partitions);
        }
        String state = config.getString(CLUSTER + ".state-topic").trim();
        if (!TOPIC.matcher(state).matches() || state.equals(".") || state.equals("..")) {
            throw new ConfigException(origin + ": " + CLUSTER + ".state-topic: '" + state
                    + "' is not a valid Kafka topic name (1-249 of a-z A-Z 0-9 . _ -)");
        }
        int every = config.getInt(CLUSTER + ".state-every-frames");
        if (every < 1) {
            throw new ConfigException(origin + ": " + CLUSTER + ".state-every-frames must be at least 1, got " + every);
        }
        java.time.Duration session = config.getDuration(CLUSTER + ".session-timeout");
        if (session.toMillis() < 1000 || session.toMinutes() > 30) {
            throw new ConfigException(origin + ": " + CLUSTER + ".session-timeout must be 1 s to 30 min, got " + session);
        }
        if (enabled) {
            if (streamsTopic.isEmpty()) {
                throw new ConfigException(origin + ": " + CLUSTER + ".enabled needs " + ROOT
                        + ".streams-topic: the group shares out that topic's streams");
            }
            for (String other : List.of(kafka.masksTopic(), kafka.promptsTopic(), streamsTopic.get())) {
                if (state.equals(other)) {
                    throw new ConfigException(origin + ": " + CLUSTER + ".state-topic must differ from the masks,"
                            + " prompts and streams topics, it is '" + state + "'");
                }
            }
        }
        return new ClusterSettings(enabled, group, instance.isEmpty() ? Optional.empty() : Optional.of(instance),
                partitions, state, every, session);
    }

    /** A path the OS can name (no NUL character), or an error naming the key. */
    static Path path(String value, String key, String origin) {
        try {
            return Path.of(value);
        } catch (java.nio.file.InvalidPathException e) {
            throw new ConfigException(origin + ": " + key + ": not a valid path: " + e.getReason());
        }
    }

    private static String topic(Config config, String key, String origin) {
        String topic = config.getString(KAFKA + "." + key).trim();
        if (!TOPIC.matcher(topic).matches() || topic.equals(".") || topic.equals("..")) {
            throw new ConfigException(origin + ": " + KAFKA + "." + key + ": '" + topic
                    + "' is not a valid Kafka topic name (1-249 of a-z A-Z 0-9 . _ -)");
        }
        return topic;
    }

    /**
     * Flattens a section of Kafka properties (producer, client) into Kafka's dotted names: {@code linger.ms = 5} (nested) and
     * {@code "linger.ms" = 5} (quoted) both give {@code linger.ms}, as does
     * {@code -Dsamstream.kafka.producer.linger.ms=5}. Lists become Kafka's comma-separated form.
     */
    private static Map<String, String> clientProperties(Config section, String key, Map<String, String> setElsewhere,
            String origin) {
        Map<String, String> properties = new TreeMap<>();
        for (Map.Entry<String, ConfigValue> e : section.entrySet()) {
            String name = String.join(".", ConfigUtil.splitPath(e.getKey()));
            String reason = setElsewhere.get(name);
            if (reason != null) {
                throw new ConfigException(origin + ": " + ROOT + "." + key + "." + name + " is not allowed: "
                        + reason);
            }
            Object value = e.getValue().unwrapped();
            properties.put(name, value instanceof List<?> list
                    ? list.stream().map(String::valueOf).collect(Collectors.joining(","))
                    : String.valueOf(value));
        }
        return properties;
    }

    /**
     * JVM switches under {@code samstream.} that code reads itself with System.getProperty (benchmark and
     * test settings), not configuration keys: accepted from system properties only, the switch and the
     * paths under it. {@code cuda.kernels} is the build's (gpu/pom.xml: whether nvcc compiles the kernels),
     * which Maven hands on to the test JVMs. The CUDA backend's options are keys of {@code samstream.cuda}.
     */
    static final Set<String> JVM_SWITCHES = Set.of("bench", "fixtures", "cuda.kernels");

    /** Whether {@code path} (under {@code samstream.}) is one of the {@link #JVM_SWITCHES} or lies under one. */
    static boolean isJvmSwitch(String path) {
        return JVM_SWITCHES.stream().anyMatch(s -> path.equals(s) || path.startsWith(s + "."));
    }

    /**
     * A misspelt key would otherwise be silently ignored; name it instead, and where it came from: a
     * {@code -Dsamstream.*} system property is checked like a key of the file.
     */
    private static void rejectUnknownKeys(Config config, String origin) {
        if (!config.hasPath(ROOT)) {
            return;
        }
        // The reference files alone: ConfigFactory.defaultReference() has the system properties merged in.
        Config known = ConfigFactory.parseResources(ConfigLoader.class.getClassLoader(), "reference.conf")
                .getConfig(ROOT);
        Set<Map.Entry<String, ConfigValue>> entries = config.getConfig(ROOT).entrySet();
        for (Map.Entry<String, ConfigValue> e : new TreeMap<>(entries.stream()
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue))).entrySet()) {
            if (known.hasPathOrNull(e.getKey()) || e.getKey().startsWith(PRODUCER + ".")
                    || e.getKey().startsWith(CLIENT + ".")) {
                continue;
            }
            boolean property = isSystemProperty(e.getValue());
            if (property && isJvmSwitch(String.join(".", ConfigUtil.splitPath(e.getKey())))) {
                continue;
            }
            String key = ROOT + "." + e.getKey();
            throw new ConfigException((property ? "-D" + key + " (a system property)" : origin) + ": unknown key "
                    + key + " (reference.conf documents every key)");
        }
    }

    private static boolean isSystemProperty(ConfigValue value) {
        String description = value.origin().description();
        return description != null && description.startsWith("system properties");
    }
}
