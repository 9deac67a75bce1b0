package io.samstream.stream.engine;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * Reads the latest record of every stream in some partitions of the compacted state topic, up to their end as it
 * is now, unparsed: each is validated whole ({@link StateRecord}) when its stream starts, so that a bad one is
 * rejected for that stream alone.
 */
final class StateTopicReader {
    private StateTopicReader() {}

    /**
     * @throws IllegalStateException when the partitions cannot be read to their end within {@code wait}
     */
    static Map<String, ConsumerRecord<String, byte[]>> latest(KafkaConsumer<String, byte[]> c, String topic,
            Collection<Integer> partitions, Duration poll, Duration wait) {
        Map<String, ConsumerRecord<String, byte[]>> out = new HashMap<>();
        List<TopicPartition> tps = partitions.stream().map(p -> new TopicPartition(topic, p)).toList();
        try {
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps, wait);
            long deadline = System.nanoTime() + wait.toNanos();
            while (!reached(c, end)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("cluster: could not read the state topic " + topic + " within "
                            + wait.toSeconds() + " s");
                }
                for (ConsumerRecord<String, byte[]> r : c.poll(poll)) {
                    if (r.value() == null) {
                        out.remove(r.key());
                    } else {
                        out.put(r.key(), r);
                    }
                }
            }
        } finally {
            c.assign(List.of());
        }
        return out;
    }

    private static boolean reached(KafkaConsumer<?, ?> c, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (c.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }
}
