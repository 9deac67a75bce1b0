package io.samstream.stream.http;

import io.samstream.connectors.kafka.KafkaClients;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Writes the API's changes to the engine's control topics (stream definitions, prompt messages), as any other
 * producer of those topics would: key = stream id, acks=all, with the engine's Kafka security. Sending never blocks the
 * caller for long: {@link #MAX_BLOCK} at most while the brokers' metadata is fetched.
 */
final class TopicWriter implements AutoCloseable {
    static final Duration MAX_BLOCK = Duration.ofSeconds(5);
    private final KafkaProducer<String, byte[]> producer;

    TopicWriter(KafkaClients clients) {
        this.producer = clients.producer("samstream-http", Map.of(ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) MAX_BLOCK.toMillis(),
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 15_000, ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000,
                ProducerConfig.LINGER_MS_CONFIG, 0), new StringSerializer(), new ByteArraySerializer());
    }

    /** Sends {@code value} (null: a tombstone) under {@code key}; completes with where it landed. */
    CompletableFuture<RecordMetadata> send(String topic, String key, String value) {
        CompletableFuture<RecordMetadata> f = new CompletableFuture<>();
        try {
            producer.send(new ProducerRecord<>(topic, key, value == null ? null : value.getBytes(StandardCharsets.UTF_8)),
                    (meta, e) -> {
                        if (e != null) {
                            f.completeExceptionally(e);
                        } else {
                            f.complete(meta);
                        }
                    });
        } catch (RuntimeException e) {
            f.completeExceptionally(e);
        }
        return f;
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(5));
    }
}
