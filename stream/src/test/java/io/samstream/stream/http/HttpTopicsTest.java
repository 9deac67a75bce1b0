package io.samstream.stream.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.record.MaskRecordJson;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * With Kafka (the engine's embedded broker) and a streams topic, the API's changes go through the topics, as any
 * producer's would: a stream put on the streams topic starts, a prompt on the prompts topic is answered with the frame
 * this engine applies it from (or why it refused it), a delete is a tombstone that stops the stream.
 */
@Timeout(180)
class HttpTopicsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    Path dir;

    @Test
    void streamsAndPromptsGoThroughTheirTopics() throws Exception {
        try (ApiEngine api = ApiEngine.start(dir, """
                streams-topic = "api-streams"
                kafka.embedded-broker-dir = "%s"
                tracking { min-predicted-iou = 0, min-stability = 0, lost-after = 10000, hidden-lost-after = 10000,
                           merge-iou = 1.0 }
                """.formatted(dir.resolve("kafka")))) {
            JsonNode engine = JSON.readTree(api.get("/api/v1/engine").body());
            assertEquals("api-streams", engine.get("topics").get("streams").asText());
            assertEquals("samstream.prompts", engine.get("topics").get("prompts").asText());

            HttpResponse<String> put = api.send("PUT", "/api/v1/streams/t1",
                    "{\"location\": \"testpattern:64x48@10?live=true\", \"prompts\": {\"grid\": 0}}");
            assertEquals(202, put.statusCode(), put.body());
            JsonNode p = JSON.readTree(put.body());
            assertEquals("topic", p.get("via").asText());
            assertEquals("api-streams", p.get("topic").asText());
            ApiEngine.waitFor(() -> api.runtime.engine().stream("t1").map(h -> h.published() >= 2).orElse(false),
                    Duration.ofSeconds(60), "the engine following the topic runs t1");
            assertTrue(JSON.readTree(api.get("/api/v1/streams/t1").body()).get("here").asBoolean());
            HttpApiTest.assertError(api.send("PUT", "/api/v1/streams/t2", "{\"location\": 5}"), 400, "location");

            HttpResponse<String> add = api.send("POST", "/api/v1/streams/t1/prompts",
                    "{\"op\": \"add\", \"object\": 3, \"points\": [[20, 20, 1]]}");
            assertEquals(200, add.statusCode(), add.body());
            JsonNode a = JSON.readTree(add.body());
            assertEquals("topic", a.get("via").asText());
            assertTrue(a.get("applied").asBoolean());
            long from = a.get("frame").asLong();
            assertTrue(from >= 0);
            HttpResponse<String> again = api.send("POST", "/api/v1/streams/t1/prompts",
                    "{\"op\": \"add\", \"object\": 3, \"points\": [[20, 20, 1]]}");
            HttpApiTest.assertError(again, 409, "object");
            assertEquals("object_exists", JSON.readTree(again.body()).get("reason").asText(),
                    "this engine's verdict on the message it read from the topic");
            HttpApiTest.assertError(api.send("POST", "/api/v1/streams/ghost/prompts", "{\"op\": \"reset\"}"), 404,
                    "stream");
            assertMasks(api, "t1", 3, from);

            HttpResponse<String> del = api.send("DELETE", "/api/v1/streams/t1", null);
            assertEquals(202, del.statusCode(), del.body());
            ApiEngine.waitFor(() -> api.runtime.engine().stream("t1").isEmpty(), Duration.ofSeconds(30),
                    "the tombstone stops t1");
            ApiEngine.waitFor(() -> status(api, "/api/v1/streams/t1") == 404, Duration.ofSeconds(30),
                    "t1 is gone from the topic's list");
            HttpApiTest.assertError(api.send("DELETE", "/api/v1/streams/t1", null), 404, "id");
        }
    }

    /** The masks topic holds records of {@code stream} with object {@code id} from frame {@code from} on. */
    private static void assertMasks(ApiEngine api, String stream, int id, long from) throws Exception {
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, api.runtime.bootstrapServers()), new StringDeserializer(),
                new ByteArrayDeserializer())) {
            TopicPartition tp = new TopicPartition("samstream.masks", 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    MaskRecord m = MaskRecordJson.read(r.value());
                    if (m.stream().equals(stream) && m.frame() >= from
                            && (m.objects().stream().anyMatch(o -> o.id() == id) || m.hidden().contains(id))) {
                        return;
                    }
                }
            }
            throw new AssertionError("no record of " + stream + " with object " + id + " from frame " + from);
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
