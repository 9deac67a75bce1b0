package io.samstream.config;

import java.nio.file.Path;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The validated {@code samstream.kafka} section: where masks go and prompts come from.
 *
 * @param bootstrapServers the brokers ({@code host:port,...}); empty means "start the embedded broker"
 * @param masksTopic       the topic mask records are published to
 * @param promptsTopic     the topic runtime prompt changes are read from
 * @param promptsDeadLetterTopic where rejected prompt messages are copied to; empty when none
 * @param compression      the compression of mask records
 * @param producer         extra Kafka producer properties, passed through as they are (sorted by name)
 * @param client           properties of every Kafka client of the engine (security and the like; sorted)
 * @param embeddedBrokerDir where the embedded broker keeps its data; empty: kafka-data in the output
 *                          folder ({@link #embeddedBrokerDir(EngineSettings.Sinks)})
 */
public record KafkaSettings(Optional<String> bootstrapServers, String masksTopic, String promptsTopic,
                            Optional<String> promptsDeadLetterTopic, Compression compression,
                            Map<String, String> producer, Map<String, String> client, Optional<Path> embeddedBrokerDir) {
    /** The embedded broker's folder in the output folder when none is configured. */
    public static final String EMBEDDED_BROKER_DIR = "kafka-data";

    public KafkaSettings {
        Objects.requireNonNull(bootstrapServers, "bootstrapServers");
        Objects.requireNonNull(masksTopic, "masksTopic");
        Objects.requireNonNull(promptsTopic, "promptsTopic");
        Objects.requireNonNull(promptsDeadLetterTopic, "promptsDeadLetterTopic");
        Objects.requireNonNull(compression, "compression");
        Objects.requireNonNull(embeddedBrokerDir, "embeddedBrokerDir");
        producer = Collections.unmodifiableMap(new TreeMap<>(producer));
        client = Collections.unmodifiableMap(new TreeMap<>(client));
    }

    /** With the embedded broker's folder in the output folder. */
    public KafkaSettings(Optional<String> bootstrapServers, String masksTopic, String promptsTopic,
            Optional<String> promptsDeadLetterTopic, Compression compression, Map<String, String> producer,
            Map<String, String> client) {
        this(bootstrapServers, masksTopic, promptsTopic, promptsDeadLetterTopic, compression, producer, client,
                Optional.empty());
    }

    /** Without shared client properties, the embedded broker's folder in the output folder. */
    public KafkaSettings(Optional<String> bootstrapServers, String masksTopic, String promptsTopic,
            Optional<String> promptsDeadLetterTopic, Compression compression, Map<String, String> producer) {
        this(bootstrapServers, masksTopic, promptsTopic, promptsDeadLetterTopic, compression, producer, Map.of());
    }

    /** Without a dead-letter topic for rejected prompt messages. */
    public KafkaSettings(Optional<String> bootstrapServers, String masksTopic, String promptsTopic,
            Compression compression, Map<String, String> producer) {
        this(bootstrapServers, masksTopic, promptsTopic, Optional.empty(), compression, producer);
    }

    /**
     * The embedded broker's data folder: the configured one, else {@value #EMBEDDED_BROKER_DIR} in the
     * output folder (the jsonl folder, else the overlay folder, else {@code out}).
     */
    public Path embeddedBrokerDir(EngineSettings.Sinks sinks) {
        return embeddedBrokerDir.orElseGet(() -> sinks.jsonlDir().or(sinks::overlayDir).orElse(Path.of("out"))
                .resolve(EMBEDDED_BROKER_DIR));
    }

    /** With another embedded broker folder. */
    public KafkaSettings withEmbeddedBrokerDir(Path dir) {
        return new KafkaSettings(bootstrapServers, masksTopic, promptsTopic, promptsDeadLetterTopic, compression,
                producer, client, Optional.of(dir));
    }

    /** True when no brokers are configured and the engine runs its own (embedded, single node). */
    public boolean embeddedBroker() {
        return bootstrapServers.isEmpty();
    }

    /** How mask records are compressed on the wire (they are mostly RLE text, which compresses well). */
    public enum Compression {
        /** Fast, the default. */
        LZ4,
        /** Smaller records for more CPU. */
        ZSTD;

        /** The value of Kafka's {@code compression.type}. */
        public String kafkaName() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** Parses lz4 / zstd (any case); the error names {@code where} and the accepted values. */
        public static Compression parse(String value, String where) {
            try {
                return valueOf(value.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new ConfigException(where + ": unknown compression '" + value + "' (expected lz4 or zstd)");
            }
        }
    }
}
