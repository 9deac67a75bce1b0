package io.samstream.testkit.connectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.kafka.MaskRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A broker on an instance field: a fresh one for each test, its data deleted after it. */
@Timeout(180)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KafkaBrokerPerTestTest {
    @RegisterExtension
    final KafkaBrokerExtension kafka = KafkaBrokerExtension.create();

    /** Each test's broker: its address and data folder. */
    static final List<String> addresses = new ArrayList<>();
    static final List<Path> dataDirs = new ArrayList<>();

    @AfterAll
    static void eachTestHadItsOwnBrokerWhoseDataIsGone() {
        assertEquals(2, addresses.size());
        assertNotEquals(dataDirs.get(0), dataDirs.get(1));
        for (Path d : dataDirs) {
            assertFalse(Files.exists(d), "a per-test broker's data is deleted after its test: " + d);
        }
    }

    @Test
    @Order(1)
    void aStoppedBrokerComesBackOnItsPortWithItsRecords() {
        addresses.add(kafka.bootstrapServers());
        dataDirs.add(kafka.broker().logDir());
        String address = kafka.bootstrapServers();
        kafka.createTopic("masks", 1, false);
        KafkaBrokerExtensionTest.publish(kafka, "masks", "cam", KafkaBrokerExtensionTest.record("cam", 3));
        kafka.stop();
        assertTrue(assertThrows(IllegalStateException.class, kafka::bootstrapServers).getMessage().contains("stopped"));
        kafka.restart();
        assertEquals(address, kafka.bootstrapServers());
        List<MaskRecord> read = kafka.readMasks("masks", 1);
        assertEquals(1, read.size());
        assertEquals("cam", read.get(0).stream());
    }

    @Test
    @Order(2)
    void theNextTestHasAFreshBroker() {
        addresses.add(kafka.bootstrapServers());
        dataDirs.add(kafka.broker().logDir());
        assertEquals(0, kafka.broker().recordCount("masks"), "the first test's topic is not here");
    }
}
