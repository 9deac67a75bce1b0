package io.samstream.stream.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.samstream.config.ConfigLoader;
import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.stream.engine.ClusterMember;
import io.samstream.stream.engine.EngineMetrics;
import io.samstream.testkit.connectors.MaskTopics;
import io.samstream.testkit.KafkaTopics;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Issue #31, findings 1, 2, 3 and 5 through a real cluster member (one engine, embedded broker): records anyone who
 * can write to the engine's topics could send. A state of {@code "frame": -5} with the definition's hash (computable
 * by anyone) made the engine leave its group; one of {@code "frame": 2^63-2} ended its file after 0 frames; a
 * prompt for frame 2^63-1 froze the stream's prompts; a definition of 3000 objects froze every stream. Here each is
 * rejected for its stream alone, counted under its reason; the engine keeps its partitions and follows its group,
 * and every stream publishes every frame (the poisoned ones from their first frame). A state claiming more frames
 * than its file holds makes the file start again from frame 0 instead of ending it.
 */
@Timeout(300)
class ClusterControlTest {
    private static final int FRAMES = 30;

    @TempDir
    Path dir;

    @Test
    void poisonedRecordsAreRejectedForTheirStreamAloneAndTheEngineKeepsItsGroup() throws Exception {
        ListAppender<ILoggingEvent> captured = new ListAppender<>();
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        captured.start();
        root.addAppender(captured);
        Map<String, String> clips = Map.of("good", ClusterKit.clip(FRAMES, 1), "negative", ClusterKit.clip(FRAMES, 2),
                "huge", ClusterKit.clip(FRAMES, 3), "beyond", ClusterKit.clip(FRAMES, 4));
        try (EmbeddedKafkaBroker broker = ClusterKit.broker();
             KafkaProducer<String, byte[]> producer = KafkaTopics.producer(broker.bootstrapServers())) {
            String b = broker.bootstrapServers();
            ClusterKit.topics(broker, 2);
            broker.createTopic(ClusterKit.STATE, 2, true);
            // The poisoned states come first: the engine reads them when it is given their partitions.
            KafkaTopics.send(producer, ClusterKit.STATE, "negative", state("negative", clips.get("negative"), -5));
            KafkaTopics.send(producer, ClusterKit.STATE, "huge", state("huge", clips.get("huge"), Long.MAX_VALUE - 1));
            KafkaTopics.send(producer, ClusterKit.STATE, "beyond", state("beyond", clips.get("beyond"), 1000));
            for (Map.Entry<String, String> c : clips.entrySet()) {
                KafkaTopics.send(producer, ClusterKit.STREAMS, c.getKey(), c.getValue());
            }
            StringBuilder crowd = new StringBuilder("{\"location\":\"testpattern:64x48@25?frames=5\",\"prompts\":{\"objects\":[");
            for (int i = 0; i < 3000; i++) {
                crowd.append(i == 0 ? "" : ",").append("{\"id\":").append(i).append(",\"box\":[1,1,9,9]}");
            }
            KafkaTopics.send(producer, ClusterKit.STREAMS, "crowd", crowd.append("]}}").toString());
            try (SamstreamRuntime rt = SamstreamRuntime.start(ConfigLoader.load(ClusterKit.config(dir, "e1", b,
                    SamstreamRuntimePromptsTest.TINY, 2, 5, "6s", "")), VideoConnectors.sources(), c -> Optional.empty())) {
                ClusterMember m = rt.cluster().orElseThrow();
                EngineMetrics metrics = rt.engine().metrics();
                // Once its prompts partition is read (never read before: from its end on), and the stream runs.
                ClusterHandoverTest.await(() -> rt.engine().stream("good").map(h -> h.published() >= 2).orElse(false)
                        && List.copyOf(captured.list).stream().anyMatch(e -> e.getFormattedMessage()
                                .contains("reads prompts of partitions [0, 1]")), "the good stream running");
                KafkaTopics.send(producer, ClusterKit.PROMPTS, "good", "{\"stream\":\"good\",\"op\":\"add\",\"object\":9,"
                        + "\"box\":[1,1,20,20],\"frame\":9223372036854775807}");
                ClusterHandoverTest.await(() -> metrics.controlRejectedCount("state", "frame_beyond_end") == 1
                        && metrics.promptsRejectedCount("frame_too_far") == 1, "the rejections");
                List<MaskRecord> records = MaskTopics.readAll(b, ClusterKit.MASKS, 4 * FRAMES, Duration.ofSeconds(180));
                assertTrue(m.following(), "the engine follows its group");
                assertEquals(java.util.Set.of(0, 1), m.ownedPartitions());
                assertEquals(2, metrics.controlRejectedCount("state", "bad_frame"), "frames -5 and 2^63-2");
                assertEquals(1, metrics.controlRejectedCount("streams", "too_many_objects"), "the 3000 objects");
                assertTrue(rt.engine().stream("crowd").isEmpty());
                Map<String, TreeMap<Long, List<MaskRecord>>> byStream = ClusterKit.byStreamAndFrame(records);
                for (String id : clips.keySet()) {
                    TreeMap<Long, List<MaskRecord>> frames = byStream.get(id);
                    assertEquals(FRAMES, frames.size(), id + ": every frame");
                    assertEquals(0L, frames.firstKey(), id + ": from its first frame");
                    assertEquals(FRAMES - 1L, frames.lastKey(), id);
                }
                assertFalse(byStream.containsKey("crowd"));
            }
        } finally {
            root.detachAppender(captured);
        }
        List<String> lines = List.copyOf(captured.list).stream().map(ILoggingEvent::getFormattedMessage).toList();
        assertTrue(lines.stream().noneMatch(l -> l.contains("stopped following the group")), String.join("\n", lines));
        assertEquals(1, lines.stream().filter(l -> l.contains("state: rejected the record with key 'negative'")
                && l.contains("\"frame\" is -5")).count(), "logged once");
        assertTrue(lines.stream().anyMatch(l -> l.contains("streams: rejected the record with key 'crowd'")
                && l.contains("stream crowd has 3000 objects")), String.join("\n", lines));
    }

    /** A state as an engine writes it (uncompressed, as earlier versions did), for the definition {@code json}. */
    private static String state(String id, String json, long frame) {
        String hash = Integer.toHexString(json.hashCode()) + "-" + json.length();
        return "{\"stream\":\"" + id + "\",\"engine\":\"e2\",\"definition\":\"" + hash + "\",\"frame\":" + frame
                + ",\"pts_ms\":0,\"ended\":false,\"prompts_offset\":-1}";
    }
}
