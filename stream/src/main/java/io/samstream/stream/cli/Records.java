package io.samstream.stream.cli;

import io.samstream.connectors.kafka.KafkaClients;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Writes one record to a control topic and waits until the brokers acknowledged it (acks=all), within a bound.
 * Keys are stream ids, so the default partitioner puts a stream's definition and its prompts in the same
 * partition of co-partitioned topics, as the engines of a cluster expect.
 */
final class Records {
    private Records() {}

    /** Sends {@code value} (null: a tombstone) under {@code key}; returns where it was written. */
    static RecordMetadata send(KafkaClients clients, String topic, String key, String value, Duration timeout) {
        int ms = (int) timeout.toMillis();
        try (KafkaProducer<String, byte[]> producer = clients.producer("samstream-cli", Map.of(
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.MAX_BLOCK_MS_CONFIG, ms,
                ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, ms,
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, ms + 1000,
                ProducerConfig.LINGER_MS_CONFIG, 0), new StringSerializer(), new ByteArraySerializer())) {
            return producer.send(new ProducerRecord<>(topic, key,
                    value == null ? null : value.getBytes(StandardCharsets.UTF_8))).get(ms + 5000L, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new IllegalStateException("could not write to topic " + topic + ": " + cause.getMessage(), cause);
        } catch (TimeoutException e) {
            throw new IllegalStateException("could not write to topic " + topic + " within " + timeout.toSeconds()
                    + " s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while writing to topic " + topic, e);
        }
    }
}
