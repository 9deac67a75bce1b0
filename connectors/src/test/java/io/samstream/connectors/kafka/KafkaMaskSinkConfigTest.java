package io.samstream.connectors.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.KafkaSettings.Compression;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Producer settings: no broker needed, they are checked before the producer exists. */
class KafkaMaskSinkConfigTest {

    @Test
    void defaultsAreAtLeastOnce() {
        Map<String, Object> c = MaskProducerConfig.build("127.0.0.1:9", Compression.LZ4, Map.of());
        assertEquals("all", c.get("acks"));
        assertEquals("true", c.get("enable.idempotence"));
        assertEquals("5", c.get("max.in.flight.requests.per.connection"));
        assertEquals("lz4", c.get("compression.type"));
        assertEquals("300000", c.get("delivery.timeout.ms"));
        assertEquals("127.0.0.1:9", c.get("bootstrap.servers"));
    }

    @Test
    void userPropertiesWinOverDefaults() {
        Map<String, Object> c = MaskProducerConfig.build("127.0.0.1:9", Compression.ZSTD,
                Map.of("linger.ms", "50", "delivery.timeout.ms", 600000, "acks", "-1",
                        "max.in.flight.requests.per.connection", "1", "compression.type", "gzip"));
        assertEquals("50", c.get("linger.ms"));
        assertEquals(600000, c.get("delivery.timeout.ms"));
        assertEquals("-1", c.get("acks"));
        assertEquals("1", c.get("max.in.flight.requests.per.connection"));
        assertEquals("gzip", c.get("compression.type"));
    }

    @Test
    void propertiesThatBreakAtLeastOnceAreRejectedByName() {
        assertRejected(Map.of("acks", "0"), "acks=0", "at-least-once");
        assertRejected(Map.of("acks", "1"), "acks=1", "at-least-once");
        assertRejected(Map.of("enable.idempotence", "false"), "enable.idempotence=false", "at-least-once");
        assertRejected(Map.of("max.in.flight.requests.per.connection", "6"),
                "max.in.flight.requests.per.connection=6", "1 to 5");
        assertRejected(Map.of("retries", 0), "retries=0", "at-least-once");
        assertRejected(Map.of("transactional.id", "x"), "transactional.id", "not transactional");
        assertRejected(Map.of("value.serializer", "x"), "value.serializer", "cannot be set");
    }

    @Test
    void kafkaRejectsWhatItDoesNotKnow() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> KafkaMaskSink.builder("127.0.0.1:9", "t")
                        .producerProperties(Map.of("compression.type", "brotli")).build());
        assertTrue(e.getMessage().contains("compression.type"), e.getMessage());
    }

    private static void assertRejected(Map<String, ?> properties, String... expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> KafkaMaskSink.builder("127.0.0.1:9", "t").producerProperties(properties).build());
        for (String s : expected) {
            assertTrue(e.getMessage().contains(s), e.getMessage());
        }
    }
}
