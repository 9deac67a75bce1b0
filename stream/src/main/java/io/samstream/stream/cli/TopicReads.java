package io.samstream.stream.cli;

import io.samstream.connectors.kafka.KafkaClients;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads a topic as it is now, the way the engine reads its compacted topics: every partition assigned (no
 * consumer group, nothing committed), from the beginning to the end offsets taken at the start; records
 * produced meanwhile are not waited for. A missing topic is never created by reading it.
 */
final class TopicReads {
    private TopicReads() {}

    /** A consumer of every partition of nothing yet: keys as text, values as bytes, no auto-created topics. */
    static KafkaConsumer<String, byte[]> consumer(KafkaClients clients, String clientId) {
        return clients.consumer(clientId, Map.of(
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(),
                new ByteArrayDeserializer());
    }

    /** The partitions of {@code topic}; empty when it does not exist. */
    static List<TopicPartition> partitions(KafkaConsumer<?, ?> consumer, String topic, Duration timeout) {
        List<TopicPartition> out = new ArrayList<>();
        List<PartitionInfo> infos = consumer.partitionsFor(topic, timeout);
        if (infos != null) {
            infos.forEach(p -> out.add(new TopicPartition(topic, p.partition())));
        }
        return out;
    }

    /**
     * Hands every record of {@code topic} up to its end offsets at the call to {@code handler}, each partition in
     * order, until the handler returns false.
     *
     * @return false when the topic does not exist
     * @throws IllegalStateException when no record arrives for {@code timeout} before the end is reached
     */
    static boolean readToEnd(KafkaClients clients, String topic, Duration timeout,
            Predicate<ConsumerRecord<String, byte[]>> handler) {
        try (KafkaConsumer<String, byte[]> consumer = consumer(clients, "samstream-cli-read")) {
            List<TopicPartition> partitions = partitions(consumer, topic, timeout);
            if (partitions.isEmpty()) {
                return false;
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, timeout);
            long quietSince = System.nanoTime();
            while (!reached(consumer, end, timeout)) {
                var records = consumer.poll(Duration.ofMillis(200));
                if (!records.isEmpty()) {
                    quietSince = System.nanoTime();
                }
                for (ConsumerRecord<String, byte[]> r : records) {
                    if (r.offset() < end.get(new TopicPartition(r.topic(), r.partition())) && !handler.test(r)) {
                        return true;
                    }
                }
                if (records.isEmpty() && System.nanoTime() - quietSince > timeout.toNanos()) {
                    throw new IllegalStateException("reading topic " + topic + ": no record came for "
                            + timeout.toSeconds() + " s before its end");
                }
            }
            return true;
        }
    }

    private static boolean reached(KafkaConsumer<?, ?> consumer, Map<TopicPartition, Long> end, Duration timeout) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (consumer.position(e.getKey(), timeout) < e.getValue()) {
                return false;
            }
        }
        return true;
    }
}
