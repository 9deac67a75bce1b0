package io.samstream.testkit;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A test's plain Kafka client, for any broker: read a topic back whole, publish a record and wait for it.
 * Needs {@code kafka-clients} on the test's classpath (an optional dependency of the testkit).
 */
public final class KafkaTopics {
    /** Long enough for a loaded 2-core machine; a test waits this long only when something is wrong. */
    public static final Duration WAIT = Duration.ofSeconds(60);
    private static final Duration POLL = Duration.ofMillis(200);
    /** The extra poll after the expected records: a record beyond them (a duplicate) shows. */
    private static final Duration AFTER = Duration.ofMillis(300);

    private KafkaTopics() {}

    /** {@link #readAll(String, Map, String, int, Duration)} without extra consumer properties. */
    public static List<ConsumerRecord<String, byte[]>> readAll(String bootstrap, String topic, int expected,
            Duration timeout) {
        return readAll(bootstrap, Map.of(), topic, expected, timeout);
    }

    /**
     * Every record of {@code topic}, every partition from the start, without a consumer group. Waits up to
     * {@code timeout} for the topic to exist (a producer may create it with its first record), then for at
     * least {@code expected} records and for all the log held when reading began, then polls once more, so
     * that records beyond the expected ones are in the list too.
     *
     * @param properties extra consumer properties (security settings)
     * @throws AssertionError when the topic does not appear within {@code timeout}
     */
    public static List<ConsumerRecord<String, byte[]>> readAll(String bootstrap, Map<String, ?> properties,
            String topic, int expected, Duration timeout) {
        Map<String, Object> config = new HashMap<>(properties);
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            long deadline = System.nanoTime() + timeout.toNanos();
            List<TopicPartition> partitions = new ArrayList<>();
            while (partitions.isEmpty() && System.nanoTime() < deadline) {
                for (PartitionInfo p : consumer.partitionsFor(topic, timeout)) {
                    partitions.add(new TopicPartition(topic, p.partition()));
                }
                if (partitions.isEmpty()) {
                    sleep(100);
                }
            }
            if (partitions.isEmpty()) {
                throw new AssertionError("topic " + topic + " did not appear within " + timeout);
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, timeout);
            while ((out.size() < expected || !reached(consumer, end)) && System.nanoTime() < deadline) {
                consumer.poll(POLL).forEach(out::add);
            }
            consumer.poll(AFTER).forEach(out::add);
        }
        return out;
    }

    /** A producer of string keys and byte values; {@code acks=all}, as the engine's own. */
    public static KafkaProducer<String, byte[]> producer(String bootstrap) {
        return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new ByteArraySerializer());
    }

    /** Publishes {@code json} (UTF-8; {@code null}: a tombstone) under {@code key} and waits until the broker has it. */
    public static void send(KafkaProducer<String, byte[]> producer, String topic, String key, String json) {
        byte[] value = json == null ? null : json.getBytes(StandardCharsets.UTF_8);
        try {
            producer.send(new ProducerRecord<>(topic, key, value)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while sending to " + topic, e);
        } catch (ExecutionException | TimeoutException e) {
            throw new AssertionError("sending to " + topic + " failed: " + e, e);
        }
    }

    private static boolean reached(KafkaConsumer<?, ?> consumer, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (consumer.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
