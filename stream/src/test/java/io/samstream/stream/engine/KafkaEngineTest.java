package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.config.ConfigLoader;
import io.samstream.config.KafkaSettings;
import io.samstream.config.PromptSpec;
import io.samstream.config.StreamDefaults;
import io.samstream.connectors.kafka.KafkaMaskSink;
import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.gpu.model.SamBackend;
import io.samstream.testkit.connectors.KafkaBrokerExtension;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The engine publishing to a real (embedded) broker, and following the stream-definitions topic. */
@Timeout(180)
class KafkaEngineTest {
    static final Duration WAIT = Duration.ofSeconds(60);
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

    private static KafkaFrameSink kafka(String topic, EngineMetrics metrics) {
        broker.createTopic(topic, 2, false);
        return new KafkaFrameSink(KafkaMaskSink.builder(broker.bootstrapServers(), topic).build(), metrics);
    }

    @Test
    void definitionsOnTheStreamsTopicAddAndRemoveStreams() throws Exception {
        EngineMetrics metrics = EngineMetrics.inMemory();
        String topic = "masks-dynamic";
        StreamDefaults defaults = ConfigLoader.load().streamDefaults();
        AtomicLong produced = new AtomicLong();
        AtomicInteger clipRuns = new AtomicInteger();
        try (KafkaFrameSink sink = kafka(topic, metrics);
             Engine engine = new Engine(TestSources.settings(2, 1, 8), new Segmenter(backend, "tiny256"),
                     spec -> spec.isLive() ? new TestSources.Synthetic(spec.id(), 32, 24, -1, -1, 20, true, produced)
                             // The second run of the file is slow enough to be caught running.
                             : clipRuns.incrementAndGet() == 1 ? TestSources.Synthetic.file(spec.id(), 32, 24, 3)
                             : new TestSources.Synthetic(spec.id(), 32, 24, 3, -1, 300, false, new AtomicLong()),
                     sink, metrics);
             StreamsTopicWatcher watcher = StreamsTopicWatcher.start(engine, KafkaClients.plaintext(broker.bootstrapServers()),
                     "streams-defs", defaults);
             KafkaProducer<String, byte[]> producer = broker.producer()) {
            send(producer, "cam-a", "{\"location\":\"rtsp://127.0.0.1:1/a\",\"prompts\":{\"grid\":1}}");
            send(producer, "bad key!", "{\"location\":\"x\"}");
            send(producer, "cam-b", "{\"location\":\"x\",\"prompts\":{\"grid\":-3}}");
            send(producer, "clip", "{\"location\":\"clip.mp4\",\"prompts\":{\"grid\":1}}");
            StreamHandle a = await(engine, "cam-a");
            while (a.published() < 3) {
                Thread.sleep(50);
            }
            send(producer, "cam-a", null);
            StreamHandle.Result ra = a.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            assertEquals(StreamHandle.State.REMOVED, ra.state());
            while (watcher.rejected() < 2 || engine.stream("clip").isPresent() || watcher.applied() < 3) {
                Thread.sleep(50);
            }
            assertTrue(engine.stream("cam-b").isEmpty(), "a malformed definition starts nothing");
            // The same definition again does not read the ended file again; a changed one does.
            send(producer, "clip", "{\"location\":\"clip.mp4\",\"prompts\":{\"grid\":1}}");
            send(producer, "clip", "{\"location\":\"clip.mp4\",\"prompts\":{\"grid\":2}}");
            while (watcher.applied() < 4) {
                Thread.sleep(20);
            }
            StreamHandle clipAgain = engine.stream("clip").orElseThrow();
            StreamHandle.Result second = clipAgain.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            // This run's counts, not those of the earlier run of the same id.
            assertEquals(StreamHandle.State.ENDED, second.state());
            assertEquals(3, second.decoded());
            assertEquals(0, second.dropped(), "a file drops nothing");
            assertEquals(3, second.published());
            while (engine.stream("clip").isPresent()) {
                Thread.sleep(50);
            }
            List<MaskRecord> records = broker.readMasks(topic, (int) ra.published() + 6);
            assertEquals(ra.published(), records.stream().filter(r -> r.stream().equals("cam-a")).count());
            List<MaskRecord> clip = records.stream().filter(r -> r.stream().equals("clip")).toList();
            assertEquals(6, clip.size(), "read twice: once per distinct definition");
            assertEquals(List.of(1, 1, 1, 4, 4, 4), clip.stream().map(r -> r.objects().size()).toList());
            assertEquals(List.of(0L, 1L, 2L, 0L, 1L, 2L), clip.stream().map(MaskRecord::frame).toList());
            assertTrue(engine.streams().isEmpty());
        }
    }

    /** A definition the engine refuses is counted as rejected; the watcher goes on with the next ones. */
    @Test
    void theWatcherSurvivesADefinitionTheEngineRefuses() throws Exception {
        StreamDefaults defaults = ConfigLoader.load().streamDefaults();
        EngineMetrics metrics = EngineMetrics.inMemory();
        Engine engine = new Engine(TestSources.settings(2, 1, 8), new Segmenter(backend, "tiny256"),
                spec -> TestSources.Synthetic.file(spec.id(), 32, 24, 1), new CollectingSink(), metrics);
        engine.close(); // add now throws IllegalStateException
        try (StreamsTopicWatcher watcher = StreamsTopicWatcher.start(engine, KafkaClients.plaintext(broker.bootstrapServers()),
                     "streams-defs-refused", defaults);
             KafkaProducer<String, byte[]> producer = broker.producer()) {
            for (String id : List.of("one", "two")) {
                producer.send(new ProducerRecord<>("streams-defs-refused", id,
                        "{\"location\":\"clip.mp4\"}".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (watcher.rejected() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertEquals(2, watcher.rejected(), "both refused definitions counted, the watcher kept polling");
        }
    }

    private static StreamHandle await(Engine engine, String id) throws InterruptedException {
        while (engine.stream(id).isEmpty()) {
            Thread.sleep(20);
        }
        return engine.stream(id).get();
    }

    private static void send(KafkaProducer<String, byte[]> p, String key, String json) throws Exception {
        p.send(new ProducerRecord<>("streams-defs", key, json == null ? null : json.getBytes(StandardCharsets.UTF_8)))
                .get(30, TimeUnit.SECONDS);
    }
}
