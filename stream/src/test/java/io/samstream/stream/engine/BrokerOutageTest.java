package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.kafka.KafkaMaskSink;
import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.gpu.model.SamBackend;
import io.samstream.testkit.connectors.KafkaBrokerExtension;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The broker goes away mid-run and comes back: every frame's record arrives. */
@Timeout(240)
class BrokerOutageTest {
    private static final int FRAMES = 30;

    /** A broker of each test's own, which goes away and comes back on its port with its data. */
    @RegisterExtension
    final KafkaBrokerExtension broker = KafkaBrokerExtension.create();

    /** Within the producer's delivery timeout the producer itself retries: records arrive in order. */
    @Test
    void noRecordIsLostOrReorderedWhileTheBrokerIsAway() throws Exception {
        List<MaskRecord> records = runThroughOutage(Map.of(), false);
        long expected = 0;
        for (MaskRecord m : records) {
            // At least once: a repeat of an earlier frame is allowed, a gap or a reordering is not.
            assertTrue(m.frame() <= expected, "frame " + m.frame() + " before " + expected);
            if (m.frame() == expected) {
                expected++;
            }
        }
        assertEquals(FRAMES, expected, "every frame arrived");
    }

    /**
     * An outage longer than the delivery timeout: records expire in the producer and the sink sends them
     * again until they are acknowledged. Nothing is lost; a resent record may land after later frames
     * (the README says so, and how consumers order by frame).
     */
    @Test
    void recordsThatExpiredDuringTheOutageAreSentAgain() throws Exception {
        List<MaskRecord> records = runThroughOutage(Map.of("delivery.timeout.ms", 2000, "request.timeout.ms", 1000,
                "linger.ms", 0, "max.block.ms", 1000), true);
        TreeSet<Long> frames = new TreeSet<>();
        records.forEach(m -> frames.add(m.frame()));
        assertEquals(FRAMES, frames.size(), "every frame arrived: " + frames);
        assertEquals(FRAMES - 1, frames.last());
    }

    private List<MaskRecord> runThroughOutage(Map<String, ?> producer, boolean waitForSendErrors) throws Exception {
        broker.createTopic("masks", 1, false);
        EngineMetrics metrics = EngineMetrics.inMemory();
        AtomicLong produced = new AtomicLong();
        try (SamBackend backend = TestSources.tinyBackend();
             KafkaFrameSink sink = new KafkaFrameSink(
                     KafkaMaskSink.builder(broker.bootstrapServers(), "masks").producerProperties(producer).build(),
                     metrics);
             Engine engine = new Engine(TestSources.settings(2, 1, 4), new Segmenter(backend, "tiny256"),
                     spec -> new TestSources.Synthetic("clip", 32, 24, FRAMES, -1, 20, false, produced), sink,
                     metrics)) {
            StreamHandle h = engine.add(TestSources.spec("clip", "clip.mp4", false, TestSources.onePoint(8, 8)));
            while (h.published() < 5) {
                Thread.sleep(10);
            }
            broker.stop();
            // While it is away the pipeline fills up to pending-acks and waits: the file is not dropped from.
            while (metrics.pendingAcksNow() < 4) {
                Thread.sleep(10);
            }
            assertTrue(h.published() < FRAMES, "the stream waits for the broker");
            if (waitForSendErrors) {
                while (metrics.sendErrors().count() == 0) {
                    Thread.sleep(50);
                }
            }
            broker.restart();

            StreamHandle.Result r = h.result().toCompletableFuture().get(120, TimeUnit.SECONDS);
            assertEquals(StreamHandle.State.ENDED, r.state());
            assertEquals(FRAMES, r.published());
            assertEquals(0, r.dropped());
            if (waitForSendErrors) {
                assertTrue(metrics.sendErrors().count() > 0, "sends failed during the outage and were sent again");
            }
            return broker.readMasks("masks", FRAMES);
        }
    }
}
