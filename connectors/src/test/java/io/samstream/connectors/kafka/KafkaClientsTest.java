package io.samstream.connectors.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.KafkaSettings;
import io.samstream.config.KafkaSettings.Compression;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The shared client block reaches each client type that knows a property; own settings win. */
class KafkaClientsTest {
    private final KafkaClients clients = KafkaClients.of("k:9093", new KafkaSettings(Optional.of("k:9093"), "m", "p",
            Optional.empty(), Compression.LZ4, Map.of(), Map.of("security.protocol", "SASL_SSL",
            "sasl.mechanism", "PLAIN", "linger.ms", "9", "session.timeout.ms", "7000", "my.plugin.key", "x")));

    @Test
    void securityGoesToEveryClientAndTypeSpecificPropertiesOnlyWhereTheyApply() {
        Map<String, Object> producer = clients.producerConfig("a", Map.of());
        Map<String, Object> consumer = clients.consumerConfig("b", Map.of("session.timeout.ms", "9000"));
        Map<String, Object> admin = clients.adminConfig("c", Map.of());
        for (Map<String, Object> c : java.util.List.of(producer, consumer, admin)) {
            assertEquals("SASL_SSL", c.get("security.protocol"));
            assertEquals("PLAIN", c.get("sasl.mechanism"));
            assertEquals("k:9093", c.get("bootstrap.servers"));
            assertEquals("x", c.get("my.plugin.key"), "a property Kafka does not know goes to all");
        }
        assertEquals("9", producer.get("linger.ms"));
        assertFalse(consumer.containsKey("linger.ms"));
        assertFalse(admin.containsKey("linger.ms"));
        assertEquals("9000", consumer.get("session.timeout.ms"), "the client's own setting wins");
        assertEquals("b", consumer.get("client.id"));
        assertEquals(Map.of("security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN", "linger.ms", "9",
                "my.plugin.key", "x"), clients.producerProperties());
    }

    @Test
    void aClientKafkaCannotBuildIsOneClearError() {
        KafkaClients bad = new KafkaClients("k:9093", Map.of("security.protocol", "NOPE"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> bad.admin("samstream-topics", Map.of()).close());
        assertTrue(e.getMessage().startsWith("Cannot create the Kafka admin client samstream-topics (samstream.kafka.client)"),
                e.getMessage());
    }
}
