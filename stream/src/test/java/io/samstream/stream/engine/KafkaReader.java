package io.samstream.stream.engine;

import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.connectors.kafka.MaskRecordJson;
import java.time.Duration;
import java.util.ArrayList;
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
final class KafkaReader {
    private KafkaReader() {}

    /** Every record of {@code topic}, waiting up to {@code timeout} until {@code expected} arrived. */
    static List<MaskRecord> readAll(String bootstrap, String topic, int expected, Duration timeout) {
        List<MaskRecord> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo p : consumer.partitionsFor(topic, timeout)) {
                partitions.add(new TopicPartition(topic, p.partition()));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + timeout.toNanos();
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

    private static boolean reached(KafkaConsumer<?, ?> consumer, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (consumer.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }
}
