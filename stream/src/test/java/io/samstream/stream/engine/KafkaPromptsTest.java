package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.config.PromptSpec;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.gpu.model.SamBackend;
import io.samstream.stream.track.DemoScene;
import io.samstream.testkit.KafkaTopics;
import io.samstream.testkit.connectors.KafkaBrokerExtension;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Prompt changes from a real (embedded) broker's prompts topic, applied to running streams. */
@Timeout(300)
class KafkaPromptsTest {
    static final String PROMPTS = "prompts-test";
    static final String DEAD = "prompts-test-dlt";
    @RegisterExtension
    static final KafkaBrokerExtension broker = KafkaBrokerExtension.create();
    static SamBackend backend;

    @BeforeAll
    static void start() {
        backend = TestSources.tinyBackend();
    }

    @AfterAll
    static void stop() {
        backend.close();
    }

    /** An engine whose streams read endless, paced files: they run until removed and never drop a frame. */
    private Engine endlessEngine(CollectingSink sink, EngineMetrics metrics) {
        return new Engine(TestSources.settings(2, 1, 8), new Segmenter(backend, "tiny256"),
                spec -> new TestSources.Synthetic(spec.id(), 32, 24, -1, -1, 15, false, new AtomicLong()), sink, metrics);
    }

    @Test
    void promptsMidStreamAddAndRemoveObjectsOfTheirStreamOnly() throws Exception {
        EngineMetrics metrics = EngineMetrics.inMemory();
        CollectingSink sink = new CollectingSink();
        try (Engine engine = endlessEngine(sink, metrics);
             PromptsTopicWatcher watcher = PromptsTopicWatcher.start(engine, KafkaClients.plaintext(broker.bootstrapServers()), PROMPTS,
                     Optional.of(DEAD));
             KafkaProducer<String, byte[]> producer = broker.producer()) {
            StreamHandle a = engine.add(TestSources.spec("cam-a", "a.mp4", false, TestSources.onePoint(10, 10)));
            StreamHandle b = engine.add(TestSources.spec("cam-b", "b.mp4", false, TestSources.onePoint(10, 10)));
            waitFor(() -> a.published() >= 3 && b.published() >= 3);

            send(producer, "cam-a", "{\"stream\":\"cam-a\",\"op\":\"add\",\"object\":42,\"box\":[2,2,20,20],"
                    + "\"note\":\"unknown fields are fine\"}");
            waitFor(() -> sink.of("cam-a").stream().anyMatch(has(42)));

            // Rejected: malformed, an unknown stream, an id that exists; the streams go on.
            send(producer, "cam-a", "{\"stream\":\"cam-a\",\"op\":\"frobnicate\",\"object\":1}");
            send(producer, null, "{\"stream\":\"nope\",\"op\":\"remove\",\"object\":7}");
            send(producer, "cam-a", "{\"stream\":\"cam-a\",\"op\":\"add\",\"object\":7,\"points\":[[5,5,1]]}");
            send(producer, "cam-a", "{\"stream\":\"cam-a\",\"op\":\"remove\",\"object\":7}");
            waitFor(() -> {
                List<MaskRecord> r = sink.of("cam-a");
                return !r.isEmpty() && ids(r.get(r.size() - 1)).equals(Set.of(42));
            });
            long publishedThen = a.published();
            waitFor(() -> a.published() >= publishedThen + 3);

            assertEquals(3, watcher.rejected());
            assertEquals(2, watcher.accepted());
            assertEquals(1, metrics.promptsRejectedCount(PromptRejected.UNKNOWN_OP));
            assertEquals(1, metrics.promptsRejectedCount(PromptRejected.UNKNOWN_STREAM));
            assertEquals(1, metrics.promptsRejectedCount(PromptRejected.OBJECT_EXISTS));
            assertEquals(1, metrics.promptsAcceptedCount("add"));
            assertEquals(1, metrics.promptsAcceptedCount("remove"));
            assertEquals(StreamHandle.State.RUNNING, a.state());
            assertEquals(StreamHandle.State.RUNNING, b.state());

            // Object 42 appears once and stays; 7 goes once and never comes back; frames stay in order.
            List<MaskRecord> ra = sink.of("cam-a");
            int firstWith42 = indexOf(ra, has(42));
            int firstWithout7 = indexOf(ra, has(7).negate());
            assertTrue(firstWith42 > 0 && firstWithout7 > firstWith42, firstWith42 + " " + firstWithout7);
            assertTrue(ra.subList(firstWith42, ra.size()).stream().allMatch(has(42)));
            assertTrue(ra.subList(firstWithout7, ra.size()).stream().noneMatch(has(7)));
            for (int i = 1; i < ra.size(); i++) {
                assertEquals(ra.get(i - 1).frame() + 1, ra.get(i).frame());
            }
            // Stream B never saw A's changes.
            List<MaskRecord> rb = sink.of("cam-b");
            assertTrue(rb.size() > 6);
            assertTrue(rb.stream().allMatch(r -> ids(r).equals(Set.of(7))), "cam-b keeps its configured object");

            List<ConsumerRecord<String, byte[]>> dead = broker.readAll(DEAD, 3);
            assertEquals(List.of(PromptRejected.UNKNOWN_OP, PromptRejected.UNKNOWN_STREAM,
                    PromptRejected.OBJECT_EXISTS), dead.stream().map(r -> header(r, PromptsTopicWatcher.REASON_HEADER))
                    .toList());
            assertEquals("cam-a", dead.get(0).key());
            assertEquals("{\"stream\":\"cam-a\",\"op\":\"frobnicate\",\"object\":1}",
                    new String(dead.get(0).value(), StandardCharsets.UTF_8));
            assertTrue(header(dead.get(1), PromptsTopicWatcher.SOURCE_HEADER).startsWith(PROMPTS + "/0/"));

            // reset: back to the configured object, for A only.
            send(producer, "cam-a", "{\"stream\":\"cam-a\",\"op\":\"reset\"}");
            waitFor(() -> {
                List<MaskRecord> r = sink.of("cam-a");
                return ids(r.get(r.size() - 1)).equals(Set.of(7));
            });
            assertEquals(1, metrics.promptsAcceptedCount("reset"));
        }
    }

    /**
     * The abuse of the open prompts topic: a key that forges a log line, a 272 KB message of
     * 20,000 points, an object of 63 points and a flood of adds for frames to come. Each is rejected with
     * its reason (to the dead-letter topic too) and quickly; both streams go on.
     */
    @Test
    void abusiveMessagesAreRejectedAndEveryStreamGoesOn() throws Exception {
        String topic = "prompts-limits-test";
        String dead = "prompts-limits-dlt";
        EngineMetrics metrics = EngineMetrics.inMemory();
        CollectingSink sink = new CollectingSink();
        try (Engine engine = endlessEngine(sink, metrics);
             PromptsTopicWatcher watcher = PromptsTopicWatcher.start(engine, KafkaClients.plaintext(broker.bootstrapServers()), topic,
                     Optional.of(dead));
             KafkaProducer<String, byte[]> producer = broker.producer()) {
            StreamHandle a = engine.add(TestSources.spec("cam-a", "a.mp4", false, TestSources.onePoint(10, 10)));
            StreamHandle b = engine.add(TestSources.spec("cam-b", "b.mp4", false, TestSources.onePoint(10, 10)));
            waitFor(() -> a.published() >= 3 && b.published() >= 3);

            String forgedKey = "cam-a\n07:00:00.000 ERROR StreamHandle - stream s2 failed: FORGED BY KEY" + "x".repeat(5000);
            send(producer, topic, forgedKey, "{\"stream\":\"cam-a\",\"op\":\"reset\"}");
            StringBuilder many = new StringBuilder();
            for (int i = 0; i < 20_000; i++) {
                many.append(i == 0 ? "" : ",").append("[").append(i % 30).append(",").append(i % 20).append(",1]");
            }
            send(producer, topic, "cam-a", "{\"stream\":\"cam-a\",\"op\":\"add\",\"object\":5,\"points\":[" + many
                    + "]}");
            String points63 = String.join(",", java.util.Collections.nCopies(63, "[3,3,1]"));
            send(producer, topic, "cam-a", "{\"stream\":\"cam-a\",\"op\":\"add\",\"object\":6,\"points\":["
                    + points63 + "]}");
            waitFor(() -> watcher.rejected() == 3);
            // Updates of its one object for frames to come (adds would stop at max-objects-per-stream first).
            int flood = StreamPrompts.MAX_PENDING + 100;
            for (int i = 0; i < flood; i++) {
                producer.send(new ProducerRecord<>(topic, "cam-a", ("{\"stream\":\"cam-a\",\"op\":\"update\","
                        + "\"object\":7,\"box\":[1,1,9,9],\"frame\":" + (1_000 + i) + "}").getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
            waitFor(() -> watcher.rejected() + watcher.accepted() == 3 + flood);

            assertEquals(1, metrics.promptsRejectedCount(PromptRejected.KEY_MISMATCH));
            assertEquals(1, metrics.promptsRejectedCount(PromptRejected.TOO_LARGE));
            assertEquals(1, metrics.promptsRejectedCount(PromptRejected.TOO_MANY_POINTS));
            double pendingRejected = metrics.promptsRejectedCount(PromptRejected.TOO_MANY_PENDING);
            assertTrue(pendingRejected >= 100 && pendingRejected <= 110, "rejected for too many pending: " + pendingRejected);
            // Both streams go on.
            long pa = a.published();
            long pb = b.published();
            waitFor(() -> a.published() >= pa + 3 && b.published() >= pb + 3);
            assertEquals(StreamHandle.State.RUNNING, a.state());
            assertEquals(StreamHandle.State.RUNNING, b.state());

            List<ConsumerRecord<String, byte[]>> dl = broker.readAll(dead, 4);
            assertEquals(List.of(PromptRejected.KEY_MISMATCH, PromptRejected.TOO_LARGE, PromptRejected.TOO_MANY_POINTS,
                    PromptRejected.TOO_MANY_PENDING), dl.subList(0, 4).stream()
                    .map(r -> header(r, PromptsTopicWatcher.REASON_HEADER)).toList());
            String keyDetail = header(dl.get(0), PromptsTopicWatcher.DETAIL_HEADER);
            assertTrue(!keyDetail.contains("\n") && keyDetail.contains("cam-a\\n07:00:00.000 ERROR")
                    && keyDetail.contains("(5071 chars)") && keyDetail.length() < 500, keyDetail);
            assertTrue(header(dl.get(1), PromptsTopicWatcher.DETAIL_HEADER).contains("at most 65536 bytes"));
            assertTrue(header(dl.get(2), PromptsTopicWatcher.DETAIL_HEADER).startsWith("add of object 6 has 63 points"));
            assertTrue(header(dl.get(3), PromptsTopicWatcher.DETAIL_HEADER).startsWith("stream cam-a: 1000 prompt changes"));
        }
    }

    /**
     * With tracking on (the bundled demo model on a test-pattern scene whose ground truth is known): objects
     * added through the topic are seeded at their frame and then followed, a removed one ends, one added on
     * the background is lost and reported once in its frame's record; a malformed message changes nothing.
     */
    @Test
    void promptsMidStreamAddAndRemoveTrackedObjects() throws Exception {
        String topic = "prompts-tracking-test";
        int w = TrackingEngineTest.W;
        int h = TrackingEngineTest.H;
        TestPatternSource scene = new TestPatternSource("cam-t", w, h, 12, TestPatternSource.ENDLESS, 1, false);
        EngineMetrics metrics = EngineMetrics.inMemory();
        CollectingSink sink = new CollectingSink();
        try (Engine engine = new Engine(TrackingEngineTest.settings(2, 1), new Segmenter(DemoScene.backend(), "demo"),
                     spec -> new TestPatternSource(spec.id(), w, h, 12, TestPatternSource.ENDLESS, 1, false), sink,
                     metrics);
             PromptsTopicWatcher watcher = PromptsTopicWatcher.start(engine, KafkaClients.plaintext(broker.bootstrapServers()), topic,
                     Optional.empty());
             KafkaProducer<String, byte[]> producer = broker.producer()) {
            StreamHandle t = engine.add(TestSources.spec("cam-t", "t", false, new PromptSpec(List.of(
                    new PromptSpec.ObjectPrompt(1, null, TrackingEngineTest.box(scene, 0, 0))), 0)));
            waitFor(() -> t.published() >= 2);

            long at = t.nextIndex() + 6;
            double[] b = TrackingEngineTest.box(scene, at, 1);
            double[] bg = TrackingEngineTest.backgroundPoint(scene, at, at + 12);
            send(producer, topic, "cam-t", String.format(java.util.Locale.ROOT,
                    "{\"stream\":\"cam-t\",\"op\":\"add\",\"object\":2,\"box\":[%.0f,%.0f,%.0f,%.0f],\"frame\":%d}",
                    b[0], b[1], b[2], b[3], at));
            send(producer, topic, "cam-t", String.format(java.util.Locale.ROOT,
                    "{\"stream\":\"cam-t\",\"op\":\"add\",\"object\":3,\"points\":[[%.0f,%.0f,1]],\"frame\":%d}",
                    bg[0], bg[1], at));
            send(producer, topic, "cam-t", "{\"stream\":\"cam-t\",\"op\":\"add\",\"object\":4,\"box\":[1,2]}");
            waitFor(() -> sink.of("cam-t").stream().anyMatch(r -> r.lost().contains(3)));
            send(producer, topic, "cam-t", "{\"stream\":\"cam-t\",\"op\":\"remove\",\"object\":1}");
            waitFor(() -> {
                List<MaskRecord> r = sink.of("cam-t");
                return ids(r.get(r.size() - 1)).equals(Set.of(2));
            });
            long then = t.published();
            waitFor(() -> t.published() >= then + 2);
            assertEquals(StreamHandle.State.RUNNING, t.state());
            assertEquals(3, watcher.accepted());
            assertEquals(1, watcher.rejected());

            List<MaskRecord> records = sink.of("cam-t");
            for (int i = 0; i < records.size(); i++) {
                assertEquals(i, records.get(i).frame(), "frame order");
            }
            int with2 = indexOf(records, has(2));
            assertEquals(at, with2, "object 2 is seeded at the frame its message named");
            int without1 = indexOf(records, has(1).negate());
            assertTrue(without1 > with2, with2 + " " + without1);
            for (MaskRecord r : records) {
                if (ids(r).contains(1)) {
                    double iou = TrackingEngineTest.iou(r, 1, scene, 0);
                    assertTrue(iou >= 0.8, "frame " + r.frame() + ": object 1 follows shape 0, IoU " + iou);
                }
                if (ids(r).contains(2)) {
                    double iou = TrackingEngineTest.iou(r, 2, scene, 1);
                    assertTrue(iou >= 0.8, "frame " + r.frame() + ": object 2 follows shape 1, IoU " + iou);
                }
            }
            assertTrue(records.subList(with2, records.size()).stream().allMatch(has(2)));
            assertTrue(records.subList(without1, records.size()).stream().noneMatch(has(1)));
            List<MaskRecord> lost = records.stream().filter(r -> !r.lost().isEmpty()).toList();
            assertEquals(1, lost.size(), "one report of a lost object");
            assertEquals(List.of(3), lost.get(0).lost());
            int lostAt = records.indexOf(lost.get(0));
            assertEquals(at + TrackingEngineTest.TRACKING.lostAfter() - 1, lostAt);
            // Every frame of object 3 is bad: it is never published, the records list it as hidden until lost.
            assertTrue(records.subList(with2, lostAt).stream().allMatch(r -> r.hidden().contains(3)),
                    "coasting (hidden) until lost");
            assertTrue(records.stream().noneMatch(has(3)), "no bad frame's mask is published");
            assertTrue(records.subList(lostAt, records.size()).stream().noneMatch(r -> r.hidden().contains(3)),
                    "and gone after");
            assertTrue(records.stream().allMatch(r -> r.objects().stream().allMatch(o -> o.area() > 0)),
                    "no record has an empty mask");
            assertEquals(1.0, metrics.objectsLostCount("cam-t"));
        }
    }

    private static Predicate<MaskRecord> has(int id) {
        return r -> ids(r).contains(id);
    }

    private static Set<Integer> ids(MaskRecord r) {
        return r.objects().stream().map(o -> o.id()).collect(Collectors.toSet());
    }

    private static int indexOf(List<MaskRecord> records, Predicate<MaskRecord> p) {
        for (int i = 0; i < records.size(); i++) {
            if (p.test(records.get(i))) {
                return i;
            }
        }
        return -1;
    }

    private static String header(ConsumerRecord<String, byte[]> r, String name) {
        return new String(r.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }

    private static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting");
            }
            Thread.sleep(20);
        }
    }

    private static void send(KafkaProducer<String, byte[]> p, String key, String json) throws Exception {
        send(p, PROMPTS, key, json);
    }

    private static void send(KafkaProducer<String, byte[]> p, String topic, String key, String json) {
        KafkaTopics.send(p, topic, key, json);
    }
}
