package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.samstream.config.PromptSpec;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.kafka.KafkaMaskSink;
import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.connectors.kafka.MaskRecordJson;
import io.samstream.connectors.video.FrameSource;
import io.samstream.gpu.model.SamBackend;
import io.samstream.stream.app.VideoConnectors;
import io.samstream.testkit.CocoMasks;
import io.samstream.testkit.connectors.KafkaBrokerExtension;
import io.samstream.testkit.connectors.TestClips;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real videos written by FFmpeg in the test, read by the real FFmpeg sources, through the graph into
 * the embedded broker and the file sinks.
 */
@Timeout(240)
class VideoEndToEndTest {
    static final int W = 96;
    static final int H = 64;
    static final int FRAMES = 12;
    static final double FPS = 10;

    @TempDir
    static Path dir;
    @RegisterExtension
    static final KafkaBrokerExtension broker = KafkaBrokerExtension.create();
    static SamBackend backend;
    static Path clip;
    static Path corrupt;
    static Path liveTs;

    @BeforeAll
    static void setUp() throws IOException {
        backend = TestSources.tinyBackend();
        clip = write(dir.resolve("clip.mp4"), FRAMES);
        liveTs = write(dir.resolve("live.ts"), 30);
        // A file that is no video at all, named like one.
        byte[] junk = new byte[20_000];
        new Random(7).nextBytes(junk);
        corrupt = Files.write(dir.resolve("corrupt.mp4"), junk);
    }

    @AfterAll
    static void tearDown() {
        backend.close();
    }

    /** {@code frames} frames of the test pattern (moving shapes on a texture), encoded by FFmpeg. */
    static Path write(Path file, int frames) throws IOException {
        return TestClips.testPattern(file, W, H, FPS, frames, 3);
    }

    static StreamSpec file(String id, Path location) {
        PromptSpec prompts = new PromptSpec(List.of(new PromptSpec.ObjectPrompt(1, null, new double[] {10, 10, 60, 50}),
                new PromptSpec.ObjectPrompt(2, new double[][] {{48, 32}, {5, 5, 0}}, null)), 1);
        return new StreamSpec(id, location.toString(), StreamSpec.Live.AUTO, StreamSpec.Decoder.CPU, prompts);
    }

    @Test
    void decodeErrorsAreCountedPerStream() throws Exception {
        Path garbled = write(dir.resolve("to-garble.mp4"), 30);
        byte[] bytes = Files.readAllBytes(garbled); // moov last: 40-70 % of the file is frame data
        java.util.Arrays.fill(bytes, bytes.length * 4 / 10, bytes.length * 7 / 10, (byte) 0xA5);
        Files.write(garbled, bytes);
        EngineMetrics metrics = EngineMetrics.inMemory();
        try (Engine engine = new Engine(TestSources.settings(4, 2, 16), new Segmenter(backend, "tiny256"),
                VideoConnectors.sources(), new CollectingSink(), metrics)) {
            StreamHandle bad = engine.add(file("garbled", garbled));
            StreamHandle good = engine.add(file("intact", clip));
            bad.result().toCompletableFuture().get(120, TimeUnit.SECONDS);
            assertEquals(StreamHandle.State.ENDED, good.result().toCompletableFuture().get(120, TimeUnit.SECONDS).state());
        }
        assertTrue(metrics.decodeErrorsCount("garbled") > 0, "samstream_decode_errors_total{stream=garbled}");
        assertEquals(0, metrics.decodeErrorsCount("intact"));
        assertTrue(metrics.registry().get("samstream.decode.errors").tag("stream", "garbled").counter().count() > 0);
    }

    @Test
    void videoFilesRunThroughTheGraphIntoKafkaAndFilesAndACorruptOneFailsAlone() throws Exception {
        broker.createTopic("e2e-masks", 2, false);
        EngineMetrics metrics = EngineMetrics.inMemory();
        Path out = dir.resolve("out");
        FrameSink sinks = FrameSink.all(List.of(
                new KafkaFrameSink(KafkaMaskSink.builder(broker.bootstrapServers(), "e2e-masks").build(), metrics),
                FileSinks.underFolders(Optional.of(out), Optional.of(out))));
        try (sinks; Engine engine = new Engine(TestSources.settings(4, 2, 16), new Segmenter(backend, "tiny256"),
                VideoConnectors.sources(), sinks, metrics)) {
            StreamHandle a = engine.add(file("a", clip));
            StreamHandle bad = engine.add(file("bad", corrupt));
            StreamHandle b = engine.add(file("b", clip));
            StreamHandle.Result rBad = bad.result().toCompletableFuture().get(120, TimeUnit.SECONDS);
            assertEquals(StreamHandle.State.FAILED, rBad.state());
            String message = rBad.error().orElseThrow().getMessage();
            assertTrue(message.contains("bad") && message.contains("corrupt.mp4"), message);
            for (StreamHandle h : List.of(a, b)) {
                StreamHandle.Result r = h.result().toCompletableFuture().get(120, TimeUnit.SECONDS);
                assertEquals(StreamHandle.State.ENDED, r.state(), h.id());
                assertEquals(FRAMES, r.published());
            }
        }

        List<MaskRecord> records = broker.readMasks("e2e-masks", 2 * FRAMES);
        assertEquals(2 * FRAMES, records.size(), "one record per frame");
        for (String stream : List.of("a", "b")) {
            List<MaskRecord> of = records.stream().filter(r -> r.stream().equals(stream)).toList();
            assertEquals(FRAMES, of.size());
            for (int i = 0; i < FRAMES; i++) {
                MaskRecord r = of.get(i);
                assertEquals(i, r.frame(), "frame order");
                assertEquals(Math.round(i * 1000 / FPS), r.ptsMs(), 1);
                assertEquals(W, r.width());
                assertEquals(H, r.height());
                assertEquals("tiny256", r.model());
                assertEquals(List.of(1, 2, PromptSpec.GRID_ID_BASE), r.objects().stream().map(MaskRecord.ObjectMask::id).toList());
                for (MaskRecord.ObjectMask o : r.objects()) {
                    assertEquals(H, o.mask().height());
                    assertEquals(W, o.mask().width());
                    boolean[] mask = CocoMasks.decode(o.mask().counts(), H, W);
                    long area = 0;
                    for (boolean m : mask) {
                        area += m ? 1 : 0;
                    }
                    assertEquals(o.area(), area, "area of the decoded mask");
                    assertTrue(o.stability() >= 0 && o.stability() <= 1);
                }
            }
            List<String> lines = Files.readAllLines(out.resolve(stream).resolve("masks.jsonl"));
            assertEquals(FRAMES, lines.size());
            assertEquals(of.get(FRAMES - 1), MaskRecordJson.read(lines.get(FRAMES - 1).getBytes(
                    java.nio.charset.StandardCharsets.UTF_8)));
            Path overlay = out.resolve(stream).resolve("overlay.mp4");
            int frames = 0;
            try (FrameSource s = VideoConnectors.sources().open(file(stream + "-overlay", overlay))) {
                while (s.next() != null) {
                    frames++;
                }
            }
            assertEquals(FRAMES, frames, "overlay.mp4 has every frame");
        }
        assertTrue(records.stream().noneMatch(r -> r.stream().equals("bad")));
    }

    /** A live HTTP stream whose server goes away and comes back: the source reconnects and frames flow again. */
    @Test
    void aLiveHttpSourceReconnectsWhenItsServerComesBack() throws Exception {
        byte[] ts = Files.readAllBytes(liveTs);
        HttpServer server = serve(0, ts);
        int port = server.getAddress().getPort();
        CollectingSink sink = new CollectingSink();
        EngineMetrics metrics = EngineMetrics.inMemory();
        try (Engine engine = new Engine(TestSources.settings(2, 1, 8), new Segmenter(backend, "tiny256"),
                VideoConnectors.sources(), sink, metrics)) {
            StreamSpec spec = new StreamSpec("cam", "http://127.0.0.1:" + port + "/live.ts", StreamSpec.Live.AUTO,
                    StreamSpec.Decoder.CPU, TestSources.onePoint(20, 20));
            assertTrue(spec.isLive());
            StreamHandle h = engine.add(spec);
            while (h.published() < 2) {
                Thread.sleep(20);
            }
            server.stop(0);
            double restartsBefore = restarts(metrics);
            // While the server is away, attempts fail and are retried with backoff; nothing is decoded.
            while (restarts(metrics) < restartsBefore + 2) {
                Thread.sleep(20);
            }
            long decodedWhileDown = h.decoded();
            while (h.inPipeline() > 0) {
                Thread.sleep(20);
            }
            long publishedWhileDown = h.published();
            server = serve(port, ts);
            // Back: the source reconnects, decodes and publishes new frames.
            while (h.decoded() <= decodedWhileDown || h.published() < publishedWhileDown + 2) {
                Thread.sleep(20);
            }
            engine.remove("cam");
            StreamHandle.Result r = h.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            assertEquals(StreamHandle.State.REMOVED, r.state(), "disconnects are not failures of a live stream");
        } finally {
            server.stop(0);
        }
    }

    private static double restarts(EngineMetrics m) {
        return m.registry().get("samstream.source.restarts").tag("stream", "cam").counter().count();
    }

    private static HttpServer serve(int port, byte[] body) throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
        s.createContext("/live.ts", ex -> {
            try (ex) {
                ex.getResponseHeaders().set("Content-Type", "video/mp2t");
                ex.sendResponseHeaders(200, body.length);
                try (OutputStream o = ex.getResponseBody()) {
                    o.write(body);
                }
            }
        });
        s.start();
        return s;
    }
}
