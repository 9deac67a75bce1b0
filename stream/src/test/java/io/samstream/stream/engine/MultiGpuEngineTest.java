package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.samstream.config.EngineSettings;
import io.samstream.config.PromptSpec;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.gpu.image.FrameImage;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.SamBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The engine on several GPUs without a GPU: two backends of the tiny CPU model stand for GPUs 0 and 1, each
 * recording the batches it encodes. Streams spread least-loaded and stay where they were placed, every batch
 * holds frames of one GPU's streams only, the records equal those of the one-backend engine, and the
 * per-GPU meters carry the {@code gpu} tag. (The same on real GPUs: {@code MultiGpuEngineGpuTest}.)
 */
@Timeout(180)
class MultiGpuEngineTest {
    static SamBackend backend;
    static final EngineSettings.Tracking TRACKING = new EngineSettings.Tracking(true, 5, 0.5, 0.6, 0.85, 30);

    @BeforeAll
    static void model() {
        backend = TestSources.tinyBackend();
    }

    @AfterAll
    static void close() {
        backend.close();
    }

    /** A GPU stand-in: the tiny model, recording each batch it encodes as its frames' widths (one per stream). */
    static final class StandIn extends EngineTest.SlowBackend {
        final List<List<Integer>> batches = new CopyOnWriteArrayList<>();

        StandIn() {
            super(backend, 0);
        }

        @Override
        public List<ImageEmbedding> embedFrames(List<? extends FrameImage> frames) {
            batches.add(frames.stream().map(FrameImage::width).toList());
            return super.embedFrames(frames);
        }

        int frames() {
            return batches.stream().mapToInt(List::size).sum();
        }
    }

    static Engine.Settings settings() {
        return new Engine.Settings(new EngineSettings.Batching(4, Duration.ofMillis(10)),
                new EngineSettings.Pipeline(2, 16), new EngineSettings.Reconnect(Duration.ofMillis(50),
                        Duration.ofMillis(200), 0), TRACKING, Optional.empty());
    }

    static List<GpuLane> lanes(StandIn... gpus) {
        List<GpuLane> out = new ArrayList<>();
        for (int g = 0; g < gpus.length; g++) {
            out.add(new GpuLane(g, new Segmenter(gpus[g], "tiny256"), Optional.empty()));
        }
        return out;
    }

    /** Stream k: a file of {@code frames} frames, 40 + 2k pixels wide (its batches' widths tell it apart). */
    static int width(String id) {
        return 40 + 2 * Integer.parseInt(id.substring(1));
    }

    static final PromptSpec PROMPTS = new PromptSpec(List.of(
            new PromptSpec.ObjectPrompt(3, null, new double[] {4, 4, 30, 20})), 0);

    /** Runs STREAMS file streams of 6 frames to their end; their records, by stream, and their GPUs. */
    private static Map<String, List<MaskRecord>> run(Engine engine, CollectingSink sink, int streams,
            Map<String, String> placedOn) throws Exception {
        List<StreamHandle> handles = new ArrayList<>();
        for (int k = 0; k < streams; k++) {
            handles.add(engine.add(TestSources.spec("s" + k, "s" + k + ".mp4", false, PROMPTS)));
        }
        for (StreamHandle h : handles) {
            assertEquals(StreamHandle.State.ENDED, h.result().toCompletableFuture().get(120, TimeUnit.SECONDS).state(),
                    h.id());
            placedOn.put(h.id(), h.gpu());
        }
        Map<String, List<MaskRecord>> out = new HashMap<>();
        for (StreamHandle h : handles) {
            // capturedAt is the read time: all else must be equal.
            out.put(h.id(), sink.of(h.id()).stream().map(r -> new MaskRecord(r.stream(), r.frame(), r.ptsMs(),
                    Instant.EPOCH, r.width(), r.height(), r.model(), r.objects(), r.hidden(), r.lost())).toList());
        }
        return out;
    }

    private static FrameSourceFactory files() {
        return spec -> TestSources.Synthetic.file(spec.id(), width(spec.id()), 32, 6);
    }

    @Test
    void streamsSpreadOverTheGpusAndEachBatchHoldsOneGpusFramesWithTheOneGpuRecords() throws Exception {
        int streams = 4;
        StandIn one = new StandIn();
        Map<String, List<MaskRecord>> single;
        CollectingSink singleSink = new CollectingSink();
        Map<String, String> singlePlaced = new HashMap<>();
        try (Engine engine = new Engine(settings(), lanes(one), files(), singleSink, EngineMetrics.inMemory())) {
            single = run(engine, singleSink, streams, singlePlaced);
        }
        assertEquals(Set.of("0"), Set.copyOf(singlePlaced.values()));

        StandIn gpu0 = new StandIn();
        StandIn gpu1 = new StandIn();
        EngineMetrics metrics = EngineMetrics.inMemory();
        CollectingSink sink = new CollectingSink();
        Map<String, String> placed = new HashMap<>();
        Map<String, List<MaskRecord>> multi;
        try (Engine engine = new Engine(settings(), lanes(gpu0, gpu1), files(), sink, metrics)) {
            multi = run(engine, sink, streams, placed);
        }
        // Least loaded: two streams each.
        Map<String, List<String>> byGpu = placed.entrySet().stream().collect(Collectors.groupingBy(Map.Entry::getValue,
                Collectors.mapping(Map.Entry::getKey, Collectors.toList())));
        assertEquals(2, byGpu.get("0").size(), "streams on GPU 0: " + byGpu);
        assertEquals(2, byGpu.get("1").size(), "streams on GPU 1: " + byGpu);
        // Every batch holds frames of its own GPU's streams only, and each GPU encoded all of its streams' frames.
        for (var g : List.of(Map.entry("0", gpu0), Map.entry("1", gpu1))) {
            Set<Integer> own = byGpu.get(g.getKey()).stream().map(MultiGpuEngineTest::width).collect(Collectors.toSet());
            for (List<Integer> batch : g.getValue().batches) {
                assertTrue(own.containsAll(batch), "GPU " + g.getKey() + " batch " + batch + ", its streams' widths " + own);
            }
            assertEquals(2 * 6, g.getValue().frames(), "frames encoded on GPU " + g.getKey());
        }
        assertEquals(single, multi, "records on two GPUs as on one");
        for (String s : multi.keySet()) {
            assertEquals(6, multi.get(s).size(), s);
        }

        MeterRegistry r = metrics.registry();
        for (String g : List.of("0", "1")) {
            assertEquals(2 * 6, r.get("samstream.batch.size").tag("gpu", g).summary().totalAmount(), "gpu " + g);
            assertTrue(r.get("samstream.encoder.time").tag("gpu", g).timer().count() > 0, "gpu " + g);
            assertTrue(r.get("samstream.decoder.time").tag("gpu", g).timer().count() > 0, "gpu " + g);
            assertEquals(2 * 6, r.get("samstream.stage.time").tags("gpu", g, "stage", "queue-wait").timer().count());
            assertEquals(2 * 6, r.get("samstream.stage.time").tags("gpu", g, "stage", "ack").timer().count());
            assertEquals(0, r.get("samstream.gpu.streams").tag("gpu", g).gauge().value(), "streams ended");
            assertEquals(0, r.get("samstream.batches.in.flight").tag("gpu", g).gauge().value());
        }
        assertEquals(0, metrics.framesWaitingNow());
        assertEquals(0, metrics.pendingAcksNow());
    }

    /** Live streams: placed where the fewest run, then they stay, also when redefined while another GPU is emptier. */
    @Test
    void aStreamStaysOnItsGpuWhileItRunsAndANewOneGoesWhereTheFewestRun() throws Exception {
        StandIn gpu0 = new StandIn();
        StandIn gpu1 = new StandIn();
        EngineMetrics metrics = EngineMetrics.inMemory();
        CollectingSink sink = new CollectingSink();
        FrameSourceFactory live = spec -> new TestSources.Synthetic(spec.id(), width(spec.id()), 32, -1, -1, 20, true,
                new AtomicLong());
        try (Engine engine = new Engine(settings(), lanes(gpu0, gpu1), live, sink, metrics)) {
            StreamHandle a = engine.add(TestSources.spec("s0", "rtsp://a", true, PROMPTS));
            StreamHandle b = engine.add(TestSources.spec("s1", "rtsp://b", true, PROMPTS));
            assertNotEquals(a.gpu(), b.gpu(), "the second stream goes to the emptier GPU");
            assertEquals(1.0, metrics.registry().get("samstream.gpu.streams").tag("gpu", b.gpu()).gauge().value());
            while (sink.of("s0").size() < 3 || sink.of("s1").size() < 3) {
                Thread.sleep(10);
            }
            engine.remove("s1");
            b.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            assertEquals(0.0, metrics.registry().get("samstream.gpu.streams").tag("gpu", b.gpu()).gauge().value());

            // s0 is redefined while b's GPU runs nothing: it stays where its tracks and frames are.
            StreamHandle a2 = engine.add(TestSources.spec("s0", "rtsp://a", true, TestSources.onePoint(6, 6)));
            assertEquals(a.gpu(), a2.gpu(), "a redefined stream keeps its GPU");
            assertEquals(1.0, metrics.registry().get("samstream.gpu.streams").tag("gpu", a.gpu()).gauge().value(),
                    "one stream id, however many runs");
            // A new stream goes to the GPU that runs the fewest now.
            StreamHandle c = engine.add(TestSources.spec("s2", "rtsp://c", true, PROMPTS));
            assertEquals(b.gpu(), c.gpu());
            int before = sink.of("s0").size();
            while (sink.of("s2").size() < 3 || sink.of("s0").size() < before + 3) {
                Thread.sleep(10);
            }
            for (String id : List.of("s0", "s2")) {
                engine.remove(id);
            }
            for (StreamHandle h : List.of(a, a2, c)) {
                h.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            }
            for (String g : List.of("0", "1")) {
                assertEquals(0.0, metrics.registry().get("samstream.gpu.streams").tag("gpu", g).gauge().value());
            }
        }
        // Stickiness as the GPUs saw it: each stream's frames went to its GPU only.
        Map<String, Set<Integer>> widthsOn = Map.of("0", widths(gpu0), "1", widths(gpu1));
        for (String id : List.of("s0", "s1", "s2")) {
            long on = widthsOn.values().stream().filter(w -> w.contains(width(id))).count();
            assertEquals(1, on, id + "'s frames went to one GPU only: " + widthsOn);
        }
    }

    /** A stream taken over from another engine (failover) is placed like any other, and goes on from its frame. */
    @Test
    void aTakenOverStreamIsPlacedOnTheLeastLoadedGpu() throws Exception {
        StandIn gpu0 = new StandIn();
        StandIn gpu1 = new StandIn();
        CollectingSink sink = new CollectingSink();
        try (Engine engine = new Engine(settings(), lanes(gpu0, gpu1), files(), sink, EngineMetrics.inMemory())) {
            StreamHandle fresh = engine.add(TestSources.spec("s0", "s0.mp4", false, PROMPTS));
            StreamHandle taken = engine.add(TestSources.spec("s1", "s1.mp4", false, PROMPTS),
                    new StreamStart(10, 0, Optional.empty(), Optional.empty(), 0, null));
            assertEquals("0", fresh.gpu());
            assertEquals("1", taken.gpu());
            for (StreamHandle h : List.of(fresh, taken)) {
                assertEquals(StreamHandle.State.ENDED, h.result().toCompletableFuture().get(60, TimeUnit.SECONDS).state());
            }
        }
        assertEquals(List.of(10L, 11L, 12L, 13L, 14L, 15L), sink.of("s1").stream().map(MaskRecord::frame).toList());
        assertEquals(Set.of(width("s1")), widths(gpu1));
        assertEquals(Set.of(width("s0")), widths(gpu0));
    }

    @Test
    void oneBackendPerGpu() {
        StandIn gpu = new StandIn();
        List<GpuLane> twice = List.of(new GpuLane(0, new Segmenter(gpu, "tiny256"), Optional.empty()),
                new GpuLane(0, new Segmenter(gpu, "tiny256"), Optional.empty()));
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> new Engine(settings(), twice, files(), new CollectingSink(), EngineMetrics.inMemory()));
        assertEquals("one backend per GPU, got [0, 0]", e.getMessage());
    }

    private static Set<Integer> widths(StandIn gpu) {
        return gpu.batches.stream().flatMap(List::stream).collect(Collectors.toSet());
    }
}
