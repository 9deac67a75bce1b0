package io.samstream.connectors.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import io.samstream.connectors.record.MaskRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Mask records to publish, and a plain consumer to read a topic back. */
final class TestRecords {
    static final Instant T0 = Instant.parse("2026-01-02T03:04:05.678Z");

    private TestRecords() {}

    /** A frame of 64x48 with {@code frame % 3} objects, every field derived from stream and frame. */
    static MaskRecord frame(String stream, long frame) {
        List<MaskRecord.ObjectMask> objects = new ArrayList<>();
        for (int i = 0; i < frame % 3; i++) {
            objects.add(new MaskRecord.ObjectMask(i + 1, 0.5f + i / 8f + frame / 1000f, 0.9f - i / 16f,
                    new MaskRecord.Box(i, 2 * i, 10 + i, 20 + i), 100L + frame + i,
                    new MaskRecord.Rle(48, 64, "PPYo0" + stream.length() + "a1O" + frame + "_" + i)));
        }
        return new MaskRecord(stream, frame, frame * 40, T0.plusMillis(frame * 40), 64, 48, "sam_vit_b", objects);
    }

    /** Every record of the topic, from the start, waiting up to {@code timeout} for {@code expected} of them. */
    static List<ConsumerRecord<String, byte[]>> readAll(String bootstrapServers, String topic, int expected,
                                                        Duration timeout) {
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer =
                     new KafkaConsumer<>(config, new StringDeserializer(), new ByteArrayDeserializer())) {
            // No consumer group: assign every partition and read from the beginning.
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo p : consumer.partitionsFor(topic, timeout)) {
                partitions.add(new TopicPartition(topic, p.partition()));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (records.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
            // Anything beyond the expected count (a duplicate) would show here.
            consumer.poll(Duration.ofMillis(200)).forEach(records::add);
        }
        return records;
    }

    static Set<String> fieldNames(JsonNode node) {
        Set<String> names = new TreeSet<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
