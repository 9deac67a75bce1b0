package io.samstream.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/** The broker in a JVM of its own takes topics and records, and answers a bad topic with an error. */
class BenchBrokerTest {
    @Test
    void aBrokerInItsOwnProcessTakesATopicAndItsRecords() throws Exception {
        try (BenchBroker broker = BenchBroker.start(true)) {
            assertTrue(broker.bootstrapServers().matches("[^:]+:\\d+"), broker.bootstrapServers());
            broker.createTopic("bench-test", 2);
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                    ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new StringSerializer())) {
                for (int i = 0; i < 5; i++) {
                    producer.send(new ProducerRecord<>("bench-test", "k" + i, "v" + i)).get();
                }
            }
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                    ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                    ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(),
                    new StringDeserializer())) {
                List<TopicPartition> parts = List.of(new TopicPartition("bench-test", 0),
                        new TopicPartition("bench-test", 1));
                consumer.assign(parts);
                consumer.seekToBeginning(parts);
                int read = 0;
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (read < 5 && System.nanoTime() < deadline) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        assertEquals("v" + r.key().substring(1), r.value());
                        read++;
                    }
                }
                assertEquals(5, read);
            }
            // A topic name Kafka refuses: the child's error comes back, naming the topic; the broker goes on.
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> broker.createTopic("bad/name", 1));
            assertTrue(e.getMessage().contains("bad/name"), e.getMessage());
            broker.createTopic("bench-test-2", 1);
            assertFalse(broker.describe().isEmpty());
        }
    }
}
