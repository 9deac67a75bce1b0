package io.samstream.testkit.connectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.connectors.kafka.MaskRecordJson;
import io.samstream.testkit.KafkaTopics;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A broker on a static field: one for the whole class. (Per test: {@link KafkaBrokerPerTestTest}.) */
@Timeout(180)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KafkaBrokerExtensionTest {
    @RegisterExtension
    static final KafkaBrokerExtension kafka = KafkaBrokerExtension.configured(
            b -> b.brokerProperty("group.min.session.timeout.ms", "1000"));

    /** The broker's address in each test. */
    static final Set<String> addresses = ConcurrentHashMap.newKeySet();

    static MaskRecord record(String stream, long frame) {
        return new MaskRecord(stream, frame, frame * 40, Instant.parse("2026-01-02T03:04:05Z"), 64, 48, "tiny",
                List.of(new MaskRecord.ObjectMask(1, 0.9f, 0.95f, new MaskRecord.Box(1, 2, 3, 4), 4,
                        new MaskRecord.Rle(48, 64, "0T31"))));
    }

    static void publish(KafkaBrokerExtension broker, String topic, String key, MaskRecord m) {
        try (KafkaProducer<String, byte[]> p = broker.producer()) {
            KafkaTopics.send(p, topic, key, new String(MaskRecordJson.write(m), StandardCharsets.UTF_8));
        }
    }

    @Test
    @Order(1)
    void recordsGoInAndComeBackOut() {
        addresses.add(kafka.bootstrapServers());
        kafka.createTopic("t", 2, false);
        try (KafkaProducer<String, byte[]> p = kafka.producer()) {
            for (int i = 0; i < 5; i++) {
                KafkaTopics.send(p, "t", "k" + i, "v" + i);
            }
        }
        List<ConsumerRecord<String, byte[]>> read = kafka.readAll("t", 5);
        assertEquals(5, read.size());
        for (ConsumerRecord<String, byte[]> r : read) {
            assertEquals("v" + r.key().substring(1), new String(r.value(), StandardCharsets.UTF_8));
        }
    }

    @Test
    @Order(2)
    void theBrokerStaysForTheWholeClass() {
        addresses.add(kafka.bootstrapServers());
        assertEquals(1, addresses.size(), "one class-wide broker: " + addresses);
        assertEquals(5, kafka.readAll("t", 5).size(), "the first test's records are still there");
    }

    @Test
    @Order(3)
    void maskRecordsAreReadBackAndAKeyThatIsNotTheirStreamFailsTheRead() {
        kafka.createTopic("masks", 1, false);
        publish(kafka, "masks", "cam", record("cam", 3));
        List<MaskRecord> read = kafka.readMasks("masks", 1);
        assertEquals(1, read.size());
        assertEquals(3, read.get(0).frame());
        assertEquals("0T31", read.get(0).objects().get(0).mask().counts());

        publish(kafka, "masks", "other", record("cam", 4));
        AssertionError e = assertThrows(AssertionError.class, () -> kafka.readMasks("masks", 2));
        assertTrue(e.getMessage().contains("key other differs from stream cam"), e.getMessage());
    }
}
