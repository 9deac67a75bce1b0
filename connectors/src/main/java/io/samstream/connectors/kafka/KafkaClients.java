package io.samstream.connectors.kafka;

import io.samstream.config.KafkaSettings;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serializer;

/**
 * The one place the engine's Kafka clients are built: every producer, consumer and admin client gets
 * the brokers and the shared {@code samstream.kafka.client} properties (security: protocol, SASL,
 * trust and key stores; anything else passed through). A shared property goes to each client type
 * that knows it, and to all of them when none does (a custom plugin's own settings).
 */
public final class KafkaClients {
    private enum Kind { PRODUCER, CONSUMER, ADMIN }

    private final String bootstrapServers;
    private final Map<String, String> shared;

    public KafkaClients(String bootstrapServers, Map<String, String> shared) {
        this.bootstrapServers = Objects.requireNonNull(bootstrapServers, "bootstrapServers");
        if (bootstrapServers.isBlank()) {
            throw new IllegalArgumentException("bootstrapServers must name at least one broker");
        }
        this.shared = Map.copyOf(shared);
    }

    /** The brokers and the {@code samstream.kafka.client} block of {@code settings}. */
    public static KafkaClients of(String bootstrapServers, KafkaSettings settings) {
        return new KafkaClients(bootstrapServers, settings.client());
    }

    /** Plain text, no shared properties: for a broker of one's own (the embedded one, tests). */
    public static KafkaClients plaintext(String bootstrapServers) {
        return new KafkaClients(bootstrapServers, Map.of());
    }

    public String bootstrapServers() {
        return bootstrapServers;
    }

    /** The shared properties as configured. */
    public Map<String, String> shared() {
        return shared;
    }

    /** The brokers, the shared properties a producer takes, then {@code own} on top. */
    public Map<String, Object> producerConfig(String clientId, Map<String, ?> own) {
        return config(Kind.PRODUCER, clientId, own);
    }

    public Map<String, Object> consumerConfig(String clientId, Map<String, ?> own) {
        return config(Kind.CONSUMER, clientId, own);
    }

    public Map<String, Object> adminConfig(String clientId, Map<String, ?> own) {
        return config(Kind.ADMIN, clientId, own);
    }

    /** The shared properties a producer takes (no brokers, no client id): the mask sink adds its own. */
    public Map<String, String> producerProperties() {
        Map<String, String> out = new HashMap<>();
        shared.forEach((k, v) -> {
            if (appliesTo(Kind.PRODUCER, k)) {
                out.put(k, v);
            }
        });
        return out;
    }

    public <K, V> KafkaProducer<K, V> producer(String clientId, Map<String, ?> own, Serializer<K> keys,
            Serializer<V> values) {
        try {
            return new KafkaProducer<>(producerConfig(clientId, own), keys, values);
        } catch (KafkaException e) {
            throw cannotCreate("producer " + clientId, e);
        }
    }

    public <K, V> KafkaConsumer<K, V> consumer(String clientId, Map<String, ?> own, Deserializer<K> keys,
            Deserializer<V> values) {
        try {
            return new KafkaConsumer<>(consumerConfig(clientId, own), keys, values);
        } catch (KafkaException e) {
            throw cannotCreate("consumer " + clientId, e);
        }
    }

    public Admin admin(String clientId, Map<String, ?> own) {
        try {
            return Admin.create(adminConfig(clientId, own));
        } catch (KafkaException e) {
            throw cannotCreate("admin client " + clientId, e);
        }
    }

    private Map<String, Object> config(Kind kind, String clientId, Map<String, ?> own) {
        Map<String, Object> config = new HashMap<>();
        shared.forEach((k, v) -> {
            if (appliesTo(kind, k)) {
                config.put(k, v);
            }
        });
        config.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        config.put(CommonClientConfigs.CLIENT_ID_CONFIG, Objects.requireNonNull(clientId, "clientId"));
        config.putAll(own);
        return config;
    }

    private static boolean appliesTo(Kind kind, String key) {
        Set<String> producer = ProducerConfig.configNames();
        Set<String> consumer = ConsumerConfig.configNames();
        Set<String> admin = AdminClientConfig.configNames();
        if (!producer.contains(key) && !consumer.contains(key) && !admin.contains(key)) {
            return true; // not Kafka's own: a plugin's setting, passed to every client
        }
        return switch (kind) {
            case PRODUCER -> producer.contains(key);
            case CONSUMER -> consumer.contains(key);
            case ADMIN -> admin.contains(key);
        };
    }

    private static IllegalArgumentException cannotCreate(String what, KafkaException e) {
        String cause = e.getCause() == null ? "" : ": " + e.getCause().getMessage();
        return new IllegalArgumentException("Cannot create the Kafka " + what + " (samstream.kafka.client): "
                + e.getMessage() + cause, e);
    }
}
