package io.samstream.stream.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.testkit.KafkaTopics;
import io.samstream.testkit.TestModels;
import io.samstream.testkit.connectors.KafkaBrokerExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SIGTERM to a busy clustered engine in memory mode: streams of 120 objects each, whose steps take seconds on the CPU,
 * frames queued behind them, the state topic and the masks topic to flush. The whole shutdown shares
 * {@code samstream.shutdown-timeout} (15 s by default): the process exits within it, with 143 (SIGTERM), after saying
 * how long its close took.
 */
@Timeout(300)
class ShutdownTimeoutTest {
    private static final int OBJECTS = 120;
    private static final Duration SHUTDOWN = Duration.ofSeconds(15);

    @RegisterExtension
    final KafkaBrokerExtension kafka = KafkaBrokerExtension.configured(ClusterKit::fastGroups);

    @Test
    void aBusyEngineExitsWithinTheShutdownTimeout() throws Exception {
        Path dir = Files.createDirectories(Path.of("target", "shutdown-timeout").toAbsolutePath());
        ClusterKit.topics(kafka.broker(), 2);
        try (KafkaProducer<String, byte[]> producer = kafka.producer()) {
            for (String id : List.of("heavy-a", "heavy-b")) {
                KafkaTopics.send(producer, ClusterKit.STREAMS, id, heavyLiveStream());
            }
        }
        Path config = ClusterKit.config(dir, "e1", kafka.bootstrapServers(), TestModels.demoSam2().toString(), 2, 5,
                "10s", ClusterKit.KEEP_TRACKS);
        try (EngineProcess engine = EngineProcess.start("e1", config, dir);
                MaskTap tap = new MaskTap(kafka.bootstrapServers(), ClusterKit.MASKS)) {
            // Busy: both streams published, so frames are in every stage (steps of seconds, more queued).
            long deadline = System.nanoTime() + Duration.ofSeconds(200).toNanos();
            while (tap.records().stream().map(r -> r.stream()).distinct().count() < 2) {
                assertTrue(engine.alive(), "the engine exited early: " + engine.lines());
                assertTrue(System.nanoTime() < deadline, "no records of both streams in 200 s: " + engine.lines());
                Thread.sleep(200);
            }
            long t0 = System.nanoTime();
            OptionalInt exit = engine.terminate(SHUTDOWN.plusSeconds(30));
            double took = (System.nanoTime() - t0) / 1e9;
            System.out.printf("SIGTERM to exit: %.1f s (exit %s); %s%n", took, exit,
                    engine.lines().stream().filter(l -> l.contains("closed in")).findFirst().orElse("no close line"));
            assertTrue(exit.isPresent(), "still running 45 s after SIGTERM");
            assertTrue(took <= SHUTDOWN.toSeconds(), "exited " + took + " s after SIGTERM, more than "
                    + SHUTDOWN.toSeconds() + " s:\n" + String.join("\n", engine.lines()));
            assertEquals(143, exit.getAsInt(), "the exit status of a JVM stopped by SIGTERM");
            assertEquals(1, engine.count("closed in"), "the close ran to its end (its parts bounded)");
        }
    }

    /** A live test pattern with {@link #OBJECTS} small boxes on a grid. */
    private static String heavyLiveStream() {
        StringBuilder objects = new StringBuilder();
        for (int i = 0; i < OBJECTS; i++) {
            int x = (i % 12) * 10, y = (i / 12) * 9;
            objects.append(i == 0 ? "" : ",").append("{\"id\":").append(i + 1).append(",\"box\":[").append(x)
                    .append(',').append(y).append(',').append(x + 8).append(',').append(y + 8).append("]}");
        }
        return "{\"location\":\"testpattern:" + ClusterKit.WIDTH + "x" + ClusterKit.HEIGHT
                + "@10?live=true\",\"prompts\":{\"objects\":[" + objects + "]}}";
    }
}
