package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import io.samstream.connectors.kafka.KafkaMaskSink;
import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.gpu.model.SamBackend;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The broker goes away mid-run and comes back: every frame's record arrives, in order. */
@Timeout(240)
class BrokerOutageTest {
    @TempDir
    Path kafkaData;

    @Test
    void noRecordIsLostWhileTheBrokerIsAway() throws Exception {
        int frames = 30;
        EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().logDir(kafkaData).start();
        int port = broker.port();
        broker.createTopic("masks", 1, false);
        EngineMetrics metrics = EngineMetrics.inMemory();
        AtomicLong produced = new AtomicLong();
        try (SamBackend backend = TestSources.tinyBackend();
             KafkaFrameSink sink = new KafkaFrameSink(
                     KafkaMaskSink.builder(broker.bootstrapServers(), "masks")
                             // Short timeouts: records expire in the producer during the outage, so the
                             // sink's own resend path (not only the producer's retries) is exercised.
                             .producerProperties(Map.of("delivery.timeout.ms", 2000, "request.timeout.ms", 1000,
                                     "linger.ms", 0, "max.block.ms", 1000))
                             .build(), metrics);
             Engine engine = new Engine(TestSources.settings(2, 1, 4), new Segmenter(backend, "tiny256"),
                     spec -> new TestSources.Synthetic("clip", 32, 24, frames, -1, 20, false, produced), sink,
                     metrics)) {
            StreamHandle h = engine.add(TestSources.spec("clip", "clip.mp4", false, TestSources.onePoint(8, 8)));
            while (h.published() < 5) {
                Thread.sleep(10);
            }
            broker.close();
            // While it is away the pipeline fills up to pending-acks and waits: the file is not dropped from.
            while (metrics.pendingAcksNow() < 4) {
                Thread.sleep(10);
            }
            long publishedDuringOutage = h.published();
            assertTrue(publishedDuringOutage < frames, "the stream waits for the broker");
            // Longer than the delivery timeout: sends fail and are sent again.
            while (metrics.sendErrors().count() == 0) {
                Thread.sleep(50);
            }
            broker = EmbeddedKafkaBroker.builder().port(port).logDir(kafkaData).start();

            StreamHandle.Result r = h.result().toCompletableFuture().get(120, TimeUnit.SECONDS);
            assertEquals(StreamHandle.State.ENDED, r.state());
            assertEquals(frames, r.published());
            assertEquals(0, r.dropped());
            List<MaskRecord> records = KafkaReader.readAll(broker.bootstrapServers(), "masks", frames,
                    Duration.ofSeconds(60));
            long expected = 0;
            for (MaskRecord m : records) {
                // At least once: a repeat of an earlier frame is allowed, a gap or a reordering is not.
                assertTrue(m.frame() <= expected, "frame " + m.frame() + " before " + expected);
                if (m.frame() == expected) {
                    expected++;
                }
            }
            assertEquals(frames, expected, "every frame arrived");
            assertTrue(metrics.sendErrors().count() > 0, "sends failed during the outage and were sent again");
        } finally {
            broker.close();
        }
    }
}
