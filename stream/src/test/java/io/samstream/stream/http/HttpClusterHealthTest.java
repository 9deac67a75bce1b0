package io.samstream.stream.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * In a cluster, {@code /health/ready} says whether the engine is a member of its group: ready once it joined, unready
 * (and {@code /health/live} down) once it is out of the group for good, as when another process takes its
 * group.instance.id and fences it. Before, such an engine kept answering /metrics and passed every probe.
 */
@Timeout(180)
class HttpClusterHealthTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path dir;

    @Test
    void anEngineOutOfItsGroupIsNotReady() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder()
                .brokerProperty("group.min.session.timeout.ms", "1000").start();
             ApiEngine api = ApiEngine.start(dir, """
                     streams-topic = "health-streams"
                     kafka.bootstrap-servers = "%s"
                     cluster { enabled = on, group = "health", instance-id = "e1", partitions = 2,
                               state-topic = "health-state", session-timeout = 3s }
                     """.formatted(broker.bootstrapServers()))) {
            ApiEngine.waitFor(() -> status(api, "/health/ready") == 200, Duration.ofSeconds(60), "ready once joined");
            JsonNode ready = JSON.readTree(api.get("/health/ready").body());
            assertTrue(ready.get("checks").get("cluster").asText().startsWith("member of group"), ready.toString());
            assertEquals("e1", JSON.readTree(api.get("/api/v1/engine").body()).get("engine").asText());

            // Another process joins as e1 (static membership): the engine is fenced out of its group.
            try (KafkaConsumer<String, byte[]> imposter = new KafkaConsumer<>(Map.of(
                    ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                    ConsumerConfig.GROUP_ID_CONFIG, "health",
                    ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "e1",
                    ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 3000, ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500,
                    ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName()),
                    new StringDeserializer(), new ByteArrayDeserializer())) {
                imposter.subscribe(List.of("health-streams"));
                long deadline = System.nanoTime() + 60_000_000_000L;
                while (status(api, "/health/ready") == 200 && System.nanoTime() < deadline) {
                    imposter.poll(Duration.ofMillis(200));
                }
                HttpResponse<String> notReady = api.get("/health/ready");
                assertEquals(503, notReady.statusCode(), notReady.body());
                JsonNode checks = JSON.readTree(notReady.body()).get("checks");
                assertTrue(checks.get("cluster").asText().startsWith("out of the group"), checks.toString());
                ApiEngine.waitFor(() -> status(api, "/health/live") == 503, Duration.ofSeconds(30),
                        "its group loop stopped for good: not live either (a supervisor restarts it)");
                assertTrue(api.get("/health/live").body().contains("group-loop"));
            }
        }
    }

    private static int status(ApiEngine api, String path) {
        try {
            return api.get(path).statusCode();
        } catch (Exception e) {
            return -1;
        }
    }
}
