package io.samstream.stream.engine;

import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.record.MaskRecordJson;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Reads a topic from the start, as a consumer of the masks topic would. */
public final class KafkaReader {
    private KafkaReader() {}

    /** Every record of {@code topic}, waiting up to {@code timeout} until {@code expected} arrived. */
    public static List<MaskRecord> readAll(String bootstrap, String topic, int expected, Duration timeout) {
        return readAll(bootstrap, Map.of(), topic, expected, timeout);
    }

    /** {@link #readAll(String, String, int, Duration)} with extra consumer properties (security). */
    public static List<MaskRecord> readAll(String bootstrap, Map<String, ?> properties, String topic, int expected,
            Duration timeout) {
        List<MaskRecord> out = new ArrayList<>();
        Map<String, Object> config = new HashMap<>(properties);
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            long deadline = System.nanoTime() + timeout.toNanos();
            List<TopicPartition> partitions = new ArrayList<>();
            // A topic the producer creates on its first record may not exist yet.
            while (partitions.isEmpty() && System.nanoTime() < deadline) {
                for (PartitionInfo p : consumer.partitionsFor(topic, timeout)) {
                    partitions.add(new TopicPartition(topic, p.partition()));
                }
                if (partitions.isEmpty()) {
                    sleep();
                }
            }
            if (partitions.isEmpty()) {
                throw new AssertionError("topic " + topic + " did not appear within " + timeout);
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            // At least `expected` records, and everything the log held when reading began (repeats included).
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, timeout);
            while ((out.size() < expected || !reached(consumer, end)) && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    MaskRecord m = MaskRecordJson.read(r.value());
                    if (!m.stream().equals(r.key())) {
                        throw new AssertionError("key " + r.key() + " differs from stream " + m.stream());
                    }
                    out.add(m);
                }
            }
            consumer.poll(Duration.ofMillis(300)).forEach(r -> out.add(MaskRecordJson.read(r.value())));
        }
        return out;
    }

    private static void sleep() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
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
}
