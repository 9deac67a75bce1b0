package io.samstream.testkit.connectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.connectors.kafka.MaskRecordJson;
import io.samstream.testkit.KafkaTopics;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(180)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KafkaBrokerExtensionTest {
    /** One broker for the class. */
    @RegisterExtension
    static final KafkaBrokerExtension shared = KafkaBrokerExtension.configured(
            b -> b.brokerProperty("group.min.session.timeout.ms", "1000"));
    /** A fresh broker for each test. */
    @RegisterExtension
    final KafkaBrokerExtension own = KafkaBrokerExtension.create();

    /** The shared broker's address in each test, and the data folders the brokers had. */
    static final Set<String> sharedAddresses = ConcurrentHashMap.newKeySet();
    static final Set<Path> dataDirs = ConcurrentHashMap.newKeySet();

    @AfterAll
    static void theBrokersDataIsGoneWithThem() {
        dataDirs.remove(shared.broker().logDir()); // still running: the class's end stops it
        for (Path d : dataDirs) {
            assertFalse(Files.exists(d), "a per-test broker's data is deleted after its test: " + d);
        }
    }

    @Test
    @Order(1)
    void recordsGoInAndComeBackOut() {
        sharedAddresses.add(shared.bootstrapServers());
        dataDirs.add(own.broker().logDir());
        shared.createTopic("t", 2, false);
        try (KafkaProducer<String, byte[]> p = shared.producer()) {
            for (int i = 0; i < 5; i++) {
                KafkaTopics.send(p, "t", "k" + i, "v" + i);
            }
        }
        List<ConsumerRecord<String, byte[]>> read = shared.readAll("t", 5);
        assertEquals(5, read.size());
        for (ConsumerRecord<String, byte[]> r : read) {
            assertEquals("v" + r.key().substring(1), new String(r.value(), StandardCharsets.UTF_8));
        }
        // The per-test broker is another one.
        assertNotEquals(shared.bootstrapServers(), own.bootstrapServers());
        own.createTopic("only-here", 1, false);
        try (KafkaProducer<String, byte[]> p = own.producer()) {
            KafkaTopics.send(p, "only-here", "k", "v");
        }
        assertEquals(1, own.broker().recordCount("only-here"));
    }

    @Test
    @Order(2)
    void theClassBrokerStaysAndATestBrokerIsNew() {
        sharedAddresses.add(shared.bootstrapServers());
        dataDirs.add(own.broker().logDir());
        assertEquals(1, sharedAddresses.size(), "one class-wide broker: " + sharedAddresses);
        assertEquals(5, shared.readAll("t", 5).size(), "the class broker kept the first test's records");
        // The first test's own broker and its record are gone.
        assertEquals(0, own.broker().recordCount("only-here"));
        assertEquals(2, dataDirs.size());
    }

    @Test
    @Order(3)
    void aStoppedBrokerComesBackOnItsPortWithItsRecords() {
        dataDirs.add(own.broker().logDir());
        String address = own.bootstrapServers();
        own.createTopic("masks", 1, false);
        MaskRecord m = new MaskRecord("cam", 3, 120, Instant.parse("2026-01-02T03:04:05Z"), 64, 48, "tiny",
                List.of(new MaskRecord.ObjectMask(1, 0.9f, 0.95f, new MaskRecord.Box(1, 2, 3, 4), 4,
                        new MaskRecord.Rle(48, 64, "0T31"))));
        try (KafkaProducer<String, byte[]> p = own.producer()) {
            KafkaTopics.send(p, "masks", "cam", new String(MaskRecordJson.write(m), StandardCharsets.UTF_8));
        }
        own.stop();
        assertTrue(assertThrows(IllegalStateException.class, own::bootstrapServers).getMessage().contains("stopped"));
        own.restart();
        assertEquals(address, own.bootstrapServers());
        List<MaskRecord> read = own.readMasks("masks", 1);
        assertEquals(1, read.size());
        assertEquals(m.stream(), read.get(0).stream());
        assertEquals(m.frame(), read.get(0).frame());
        assertEquals("0T31", read.get(0).objects().get(0).mask().counts());
    }

    @Test
    @Order(4)
    void aMaskRecordUnderAnotherStreamsKeyFailsTheRead() {
        dataDirs.add(own.broker().logDir());
        own.createTopic("masks", 1, false);
        MaskRecord m = new MaskRecord("cam", 0, 0, Instant.parse("2026-01-02T03:04:05Z"), 8, 8, "tiny", List.of());
        try (KafkaProducer<String, byte[]> p = own.producer()) {
            KafkaTopics.send(p, "masks", "other", new String(MaskRecordJson.write(m), StandardCharsets.UTF_8));
        }
        AssertionError e = assertThrows(AssertionError.class, () -> own.readMasks("masks", 1));
        assertTrue(e.getMessage().contains("key other differs from stream cam"), e.getMessage());
    }
}
