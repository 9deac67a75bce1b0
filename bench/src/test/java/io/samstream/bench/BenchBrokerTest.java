package io.samstream.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.testkit.KafkaTopics;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;

/** The broker in a JVM of its own takes topics and records, and answers a bad topic with an error. */
class BenchBrokerTest {
    @Test
    void aBrokerInItsOwnProcessTakesATopicAndItsRecords() throws Exception {
        try (BenchBroker broker = BenchBroker.start(true)) {
            assertTrue(broker.bootstrapServers().matches("[^:]+:\\d+"), broker.bootstrapServers());
            broker.createTopic("bench-test", 2);
            try (KafkaProducer<String, byte[]> producer = KafkaTopics.producer(broker.bootstrapServers())) {
                for (int i = 0; i < 5; i++) {
                    KafkaTopics.send(producer, "bench-test", "k" + i, "v" + i);
                }
            }
            List<ConsumerRecord<String, byte[]>> read = KafkaTopics.readAll(broker.bootstrapServers(), "bench-test", 5,
                    Duration.ofSeconds(30));
            for (ConsumerRecord<String, byte[]> r : read) {
                assertEquals("v" + r.key().substring(1), new String(r.value(), StandardCharsets.UTF_8));
            }
            assertEquals(5, read.size());
            // A topic name Kafka refuses: the child's error comes back, naming the topic; the broker goes on.
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> broker.createTopic("bad/name", 1));
            assertTrue(e.getMessage().contains("bad/name"), e.getMessage());
            broker.createTopic("bench-test-2", 1);
            assertFalse(broker.describe().isEmpty());
        }
    }
}
