package io.samstream.connectors.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

@Timeout(120)
class EmbeddedKafkaBrokerTest {
    private static final ListAppender<ILoggingEvent> startupLog = new ListAppender<>();
    private static EmbeddedKafkaBroker broker;

    @BeforeAll
    static void start() {
        Logger logger = (Logger) LoggerFactory.getLogger(EmbeddedKafkaBroker.class);
        startupLog.start();
        logger.addAppender(startupLog);
        try {
            broker = EmbeddedKafkaBroker.start();
        } finally {
            logger.detachAppender(startupLog);
        }
    }

    @AfterAll
    static void closeDeletesTheTemporaryDirectory() {
        Path dir = broker.logDir();
        broker.close();
        broker.close(); // twice is harmless
        assertFalse(Files.exists(dir), dir + " should be gone");
    }

    @Test
    void listensOnLoopbackAndLogsWhereOnce() {
        assertTrue(broker.port() > 0);
        assertEquals("127.0.0.1:" + broker.port(), broker.bootstrapServers());
        assertTrue(Files.exists(broker.logDir().resolve("meta.properties")));
        List<ILoggingEvent> running = startupLog.list.stream()
                .filter(e -> e.getLevel() == Level.INFO && e.getFormattedMessage().contains("running at"))
                .toList();
        assertEquals(1, running.size(), startupLog.list.toString());
        assertTrue(running.get(0).getFormattedMessage().contains("Embedded Kafka broker"));
        assertTrue(running.get(0).getFormattedMessage().contains(broker.bootstrapServers()));
        assertTrue(running.get(0).getFormattedMessage().contains(broker.logDir().toString()));
    }

    @Test
    void createsPlainAndCompactedTopics() throws Exception {
        broker.createTopic("plain", 3, false);
        broker.createTopic("compacted", 1, true);
        broker.createTopic("plain", 3, false); // exists already: left as it is
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            Map<String, TopicDescription> topics = admin.describeTopics(List.of("plain", "compacted"))
                    .allTopicNames().get(30, TimeUnit.SECONDS);
            assertEquals(3, topics.get("plain").partitions().size());
            assertEquals(1, topics.get("compacted").partitions().size());
            ConfigResource plain = new ConfigResource(ConfigResource.Type.TOPIC, "plain");
            ConfigResource compacted = new ConfigResource(ConfigResource.Type.TOPIC, "compacted");
            Map<ConfigResource, Config> configs = admin.describeConfigs(List.of(plain, compacted))
                    .all().get(30, TimeUnit.SECONDS);
            assertEquals("delete", configs.get(plain).get("cleanup.policy").value());
            assertEquals("compact", configs.get(compacted).get("cleanup.policy").value());
        }
    }

    @Test
    void rejectsNonsense() {
        assertThrows(IllegalArgumentException.class, () -> broker.createTopic("t", 0, false));
        assertThrows(IllegalArgumentException.class, () -> EmbeddedKafkaBroker.builder().port(70000));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> broker.createTopic("bad topic name", 1, false));
        assertTrue(e.getMessage().contains("bad topic name"), e.getMessage());
    }
}
