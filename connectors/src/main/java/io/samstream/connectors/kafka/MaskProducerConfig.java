package io.samstream.connectors.kafka;

import io.samstream.config.KafkaSettings.Compression;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * The producer properties of the mask sink: samstream's at-least-once defaults, then the user's
 * properties on top, minus anything that would lose records without an error.
 */
final class MaskProducerConfig {
    /** Long enough to ride out a broker restart; a record still unacknowledged after it fails (counted, logged). */
    static final int DEFAULT_DELIVERY_TIMEOUT_MS = 300_000;
    /** The most an idempotent producer may have in flight and still keep order and avoid duplicates. */
    private static final int MAX_IN_FLIGHT = 5;

    private MaskProducerConfig() {}

    /**
     * @throws IllegalArgumentException naming the property, when a user property would break
     *                                  at-least-once delivery or is one the sink owns
     */
    static Map<String, Object> build(String bootstrapServers, Compression compression, Map<String, ?> user) {
        Objects.requireNonNull(bootstrapServers, "bootstrapServers");
        Objects.requireNonNull(compression, "compression");
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        config.put(ProducerConfig.CLIENT_ID_CONFIG, "samstream-masks");
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        config.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, Integer.toString(MAX_IN_FLIGHT));
        config.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression.kafkaName());
        config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Integer.toString(DEFAULT_DELIVERY_TIMEOUT_MS));
        config.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        // Kafka's default (rebootstrap) forgets the topic's partitions when no broker answers; every
        // send would then block for max.block.ms and fail. Keeping them lets sends buffer through
        // an outage and go out when the brokers are back (at the addresses they advertised).
        config.put(CommonClientConfigs.METADATA_RECOVERY_STRATEGY_CONFIG, "none");
        for (Map.Entry<String, ?> e : user.entrySet()) {
            rejectIfUnsafe(e.getKey(), e.getValue());
            config.put(e.getKey(), e.getValue());
        }
        return config;
    }

    private static void rejectIfUnsafe(String name, Object value) {
        Objects.requireNonNull(value, () -> "producer property " + name + " has no value");
        String v = value.toString().trim().toLowerCase(Locale.ROOT);
        switch (name) {
            case ProducerConfig.ACKS_CONFIG -> {
                if (!v.equals("all") && !v.equals("-1")) {
                    throw breaks(name, value, "the brokers would acknowledge records they may still lose; use all");
                }
            }
            case ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG -> {
                if (!v.equals("true")) {
                    throw breaks(name, value, "retries could then duplicate or reorder a stream's frames; use true");
                }
            }
            case ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION -> {
                int n = parseInt(name, value);
                if (n < 1 || n > MAX_IN_FLIGHT) {
                    throw breaks(name, value, "an idempotent producer keeps order only with 1 to " + MAX_IN_FLIGHT);
                }
            }
            case ProducerConfig.RETRIES_CONFIG -> {
                if (parseInt(name, value) < 1) {
                    throw breaks(name, value, "a record would fail at the first broker hiccup; leave it unset");
                }
            }
            case ProducerConfig.TRANSACTIONAL_ID_CONFIG ->
                    throw new IllegalArgumentException("producer property " + name
                            + " is not supported: the mask sink is not transactional");
            case ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG ->
                    throw new IllegalArgumentException("producer property " + name
                            + " cannot be set: the mask sink writes keys and values itself");
            default -> { }
        }
    }

    private static int parseInt(String name, Object value) {
        try {
            return Integer.parseInt(value.toString().trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("producer property " + name + "=" + value + " is not an integer", e);
        }
    }

    private static IllegalArgumentException breaks(String name, Object value, String why) {
        return new IllegalArgumentException("producer property " + name + "=" + value
                + " would break at-least-once delivery of masks: " + why);
    }
}
