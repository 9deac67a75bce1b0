package io.samstream.stream.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ConfigLoader;
import io.samstream.config.SamstreamConfig;
import io.samstream.stream.engine.PromptsTopicWatcher;
import io.samstream.stream.engine.StreamHandle;
import io.samstream.testkit.KafkaTopics;
import io.samstream.testkit.TestModels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The runtime follows the configured prompts topic and dead-letters to the configured topic. */
@Timeout(180)
class SamstreamRuntimePromptsTest {
    static final String TINY = TestModels.tinySam().toString();
    @TempDir
    Path dir;

    @Test
    void theConfiguredPromptsTopicIsFollowed() throws Exception {
        Path conf = Files.writeString(dir.resolve("app.conf"), """
                samstream {
                  model.checkpoint = "%s"
                  device = cpu
                  kafka { prompts-topic = my-prompts, prompts-dead-letter-topic = my-prompts-dlt,
                          embedded-broker-dir = "%s" }
                  streams = [ { id = live, location = "testpattern:64x48@25?live=true", prompts.grid = 1 } ]
                  http.enabled = off
                }
                """.formatted(TINY, dir.resolve("kafka-data")));
        SamstreamConfig config = ConfigLoader.load(conf);
        try (SamstreamRuntime rt = SamstreamRuntime.start(config, VideoConnectors.sources(), c -> Optional.empty());
             KafkaProducer<String, byte[]> producer = KafkaTopics.producer(rt.bootstrapServers())) {
            PromptsTopicWatcher w = rt.promptsWatcher().orElseThrow();
            StreamHandle live = rt.configuredStreams().get(0);
            for (String json : List.of("{\"stream\":\"live\",\"op\":\"add\",\"object\":5,\"points\":[[3,4,1]]}",
                    "{\"stream\":\"live\",\"op\":\"add\",\"object\":6,\"points\":[[3,4,7]]}")) {
                producer.send(new ProducerRecord<>("my-prompts", "live", json.getBytes(StandardCharsets.UTF_8)))
                        .get(30, TimeUnit.SECONDS);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while ((w.accepted() < 1 || w.rejected() < 1) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(1, w.accepted());
            assertEquals(1, w.rejected());
            assertEquals(1.0, rt.engine().metrics().promptsRejectedCount("bad_label"));
            assertEquals(StreamHandle.State.RUNNING, live.state());
            List<ConsumerRecord<String, byte[]>> dlt = KafkaTopics.readAll(rt.bootstrapServers(), "my-prompts-dlt", 1,
                    KafkaTopics.WAIT);
            ConsumerRecord<String, byte[]> dead = dlt.isEmpty() ? null : dlt.get(dlt.size() - 1);
            assertTrue(dead != null, "the rejected message reached the dead-letter topic");
            assertEquals("live", dead.key());
            assertEquals("bad_label", new String(dead.headers().lastHeader(PromptsTopicWatcher.REASON_HEADER)
                    .value(), StandardCharsets.UTF_8));
        }
    }
}
