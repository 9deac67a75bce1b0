package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.EngineSettings;
import io.samstream.config.PromptSpec;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.stream.track.DemoScene;
import io.samstream.stream.track.GeneratorDiscovery;
import io.samstream.stream.track.ObjectTracker;
import io.samstream.stream.track.Track;
import io.samstream.testkit.CocoMasks;
import io.samstream.testkit.connectors.ObjectMasks;
import io.samstream.testkit.connectors.PatternTruth;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Tracking through the engine's graph: per-stream tracks, frames in order, on the bundled demo model. */
@Timeout(300)
class TrackingEngineTest {
    static final int W = 320;
    static final int H = 240;
    static final EngineSettings.Tracking TRACKING = new EngineSettings.Tracking(true, 5, 0.5, 0.6, 0.85, 30);

    static Engine.Settings settings(int maxBatch, int inFlight) {
        return new Engine.Settings(new EngineSettings.Batching(maxBatch, Duration.ofMillis(10)),
                new EngineSettings.Pipeline(inFlight, 16),
                new EngineSettings.Reconnect(Duration.ofMillis(50), Duration.ofMillis(200), 0), TRACKING,
                Optional.empty());
    }

    /** Shape k's box in frame {@code index} of {@code source}, clamped to the frame. */
    static double[] box(TestPatternSource source, long index, int k) {
        int[] b = source.objectsAt(index).get(k).box();
        return new double[] {Math.max(0, b[0]), Math.max(0, b[1]), Math.min(W, b[2]), Math.min(H, b[3])};
    }

    /** A point on the background in frames {@code from..to} (no shape's box comes within 8 pixels of it). */
    static double[] backgroundPoint(TestPatternSource source, long from, long to) {
        for (int y = 10; y < H; y += 10) {
            for (int x = 10; x < W; x += 10) {
                boolean clear = true;
                for (long i = from; i <= to && clear; i++) {
                    for (TestPatternSource.PatternObject o : source.objectsAt(i)) {
                        int[] b = o.box();
                        clear &= x < b[0] - 8 || x > b[2] + 8 || y < b[1] - 8 || y > b[3] + 8;
                    }
                }
                if (clear) {
                    return new double[] {x, y};
                }
            }
        }
        throw new AssertionError("no background point in frames " + from + ".." + to);
    }

    static boolean[] truth(TestPatternSource source, long index, int k) {
        return PatternTruth.visible(source.render(index), W, H, source.objectsAt(index).get(k));
    }

    static double iou(MaskRecord r, int id, TestPatternSource source, int k) {
        MaskRecord.ObjectMask o = r.objects().stream().filter(m -> m.id() == id).findFirst()
                .orElseThrow(() -> new AssertionError("frame " + r.frame() + " has no object " + id));
        return CocoMasks.iou(ObjectMasks.decode(o), truth(source, r.frame(), k));
    }

    @Test
    void twoStreamsWithTheSameIdsFollowTheirOwnScenes() throws Exception {
        int frames = 8;
        Map<String, TestPatternSource> scenes = Map.of(
                "cam-a", new TestPatternSource("cam-a", W, H, 12, frames, 1, false),
                "cam-b", new TestPatternSource("cam-b", W, H, 12, frames, 7, false));
        CollectingSink sink = new CollectingSink();
        EngineMetrics metrics = EngineMetrics.inMemory();
        // Batches of 2 from both streams, 2 in flight: a stream's frames sit in successive batches decoded
        // at the same time, so only the per-stream lanes keep its frames in order.
        try (Engine engine = new Engine(settings(2, 2), new Segmenter(DemoScene.backend(), "demo"),
                spec -> new TestPatternSource(spec.id(), W, H, 12, frames, spec.id().equals("cam-a") ? 1 : 7, false),
                sink, metrics)) {
            StreamHandle a = engine.add(TestSources.spec("cam-a", "a", false, new PromptSpec(List.of(
                    new ObjectPrompt(1, null, box(scenes.get("cam-a"), 0, 0)),
                    new ObjectPrompt(2, null, box(scenes.get("cam-a"), 0, 1))), 0)));
            StreamHandle b = engine.add(TestSources.spec("cam-b", "b", false, new PromptSpec(List.of(
                    new ObjectPrompt(1, null, box(scenes.get("cam-b"), 0, 0)),
                    new ObjectPrompt(2, null, box(scenes.get("cam-b"), 0, 1))), 0)));
            assertNotSame(a.tracker(), b.tracker());
            for (StreamHandle h : List.of(a, b)) {
                assertEquals(StreamHandle.State.ENDED, h.result().toCompletableFuture().get(240, TimeUnit.SECONDS)
                        .state());
            }
            for (String s : List.of("cam-a", "cam-b")) {
                TestPatternSource own = scenes.get(s);
                TestPatternSource other = scenes.get(s.equals("cam-a") ? "cam-b" : "cam-a");
                List<MaskRecord> records = sink.of(s);
                assertEquals(frames, records.size());
                for (int i = 0; i < frames; i++) {
                    MaskRecord r = records.get(i);
                    assertEquals(i, r.frame(), s + ": frame order");
                    assertEquals(List.of(1, 2), r.objects().stream().map(MaskRecord.ObjectMask::id).toList());
                    assertEquals(List.of(), r.lost());
                    for (int k = 0; k < 2; k++) {
                        double iou = iou(r, k + 1, own, k);
                        assertTrue(iou >= 0.8, s + " frame " + i + " object " + (k + 1) + ": IoU " + iou);
                    }
                }
                double otherIou = iou(records.get(frames - 1), 1, other, 0);
                assertTrue(otherIou < 0.3, s + ": the scenes differ, so a leaked track would show (" + otherIou + ")");
            }
            assertEquals(0.0, metrics.objectsLostCount("cam-a"));
        }
    }

    @Test
    void discoveryFindsUnpromptedObjectsOnKeyFrames() throws Exception {
        int frames = 4;
        EngineSettings.Discovery d = new EngineSettings.Discovery(true, 100, 10, 0.86, 0.92, 0.7, 100, 0.5);
        Engine.Settings s = new Engine.Settings(new EngineSettings.Batching(2, Duration.ofMillis(10)),
                new EngineSettings.Pipeline(2, 16), new EngineSettings.Reconnect(Duration.ofMillis(50),
                        Duration.ofMillis(200), 0), TRACKING, Optional.of(new ObjectTracker.Discovery(
                                new GeneratorDiscovery(DemoScene.backend(), d), d.interval(), d.newObjectMaxOverlap())));
        CollectingSink sink = new CollectingSink();
        EngineMetrics metrics = EngineMetrics.inMemory();
        try (Engine engine = new Engine(s, new Segmenter(DemoScene.backend(), "demo"),
                spec -> new TestPatternSource(spec.id(), W, H, 12, frames, 1, false), sink, metrics)) {
            StreamHandle h = engine.add(TestSources.spec("auto", "a", false, new PromptSpec(List.of(), 0)));
            assertEquals(StreamHandle.State.ENDED, h.result().toCompletableFuture().get(240, TimeUnit.SECONDS).state());
            List<MaskRecord> records = sink.of("auto");
            assertEquals(frames, records.size());
            List<Integer> ids = records.get(0).objects().stream().map(MaskRecord.ObjectMask::id).toList();
            assertEquals(List.of(1_000_000, 1_000_001, 1_000_002, 1_000_003), ids, "the four shapes, found");
            for (MaskRecord r : records) {
                assertEquals(ids, r.objects().stream().map(MaskRecord.ObjectMask::id).toList(), "and followed");
            }
            assertEquals(4.0, metrics.registry().get("samstream.objects.discovered").tag("stream", "auto").counter()
                    .count());
            // The live-tracks gauge drops to 0 once the stream ended (right after its result completes).
            waitFor(() -> metrics.registry().get("samstream.tracks.active").tag("stream", "auto").gauge().value() == 0);
        }
    }

    @Test
    void aRedefinedStreamStartsWithFreshTracks() throws Exception {
        CollectingSink sink = new CollectingSink();
        try (Engine engine = new Engine(settings(2, 1), new Segmenter(DemoScene.backend(), "demo"),
                spec -> new TestPatternSource(spec.id(), W, H, 12, TestPatternSource.ENDLESS, 1, false), sink,
                EngineMetrics.inMemory())) {
            TestPatternSource scene = new TestPatternSource("s", W, H, 12, 1, 1, false);
            PromptSpec prompts = new PromptSpec(List.of(new ObjectPrompt(1, null, box(scene, 0, 0))), 0);
            StreamHandle first = engine.add(TestSources.spec("s", "s", false, prompts));
            waitFor(() -> first.published() >= 2);
            StreamHandle second = engine.add(TestSources.spec("s", "s", false, prompts));
            waitFor(() -> second.published() >= 2);
            assertNotSame(first.tracker(), second.tracker());
            long firstOfSecond = second.nextIndex() - second.decoded();
            List<Track> tracks = second.tracker().tracks();
            assertEquals(1, tracks.size());
            assertTrue(tracks.get(0).bornFrame() >= firstOfSecond,
                    "seeded in the new run (frame " + tracks.get(0).bornFrame() + " >= " + firstOfSecond + ")");
        }
    }

    static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting");
            }
            Thread.sleep(20);
        }
    }
}
