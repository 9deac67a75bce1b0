package io.samstream.stream.track.kalman;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.EngineSettings;
import io.samstream.config.PromptSpec;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.connectors.record.MaskRecord.ObjectMask;
import io.samstream.connectors.video.TestPatternSource.PatternObject;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.Prompt;
import io.samstream.stream.track.DemoScene;
import io.samstream.stream.track.Discovery;
import io.samstream.stream.track.FrameGeometry;
import io.samstream.stream.track.ObjectDiscovery;
import io.samstream.stream.track.TrackPrompts;
import io.samstream.stream.track.TrackedFrame;
import io.samstream.stream.track.TrackingMeters;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The tracker on the bundled demo model (trained on test-pattern scenes) and a test-pattern clip whose
 * ground truth says where each shape is.
 */
public class ObjectTrackerTest {
    static final int W = 320;
    static final int H = 240;
    static final int FRAMES = 16;
    public static final EngineSettings.Tracking SETTINGS = new EngineSettings.Tracking(true, 5, 0.5, 0.6, 0.85, 30);
    static DemoScene scene;

    @BeforeAll
    static void encode() {
        scene = new DemoScene("t", W, H, 1, FRAMES);
    }

    private static ObjectTracker tracker(TrackingMeters meters) {
        return new ObjectTracker("t", DemoScene.backend(), SETTINGS, null, meters);
    }

    /** Shape k's box in frame 0, clamped to the frame, as a prompt for object {@code id}. */
    private static ObjectPrompt boxOf(int id, int k) {
        int[] b = scene.source.objectsAt(0).get(k).box();
        return new ObjectPrompt(id, null, new double[] {Math.max(0, b[0]), Math.max(0, b[1]), Math.min(W, b[2]),
            Math.min(H, b[3])});
    }

    private static TrackPrompts prompts(long generation, ObjectPrompt... objects) {
        List<TrackPrompts.Seed> seeds = new ArrayList<>();
        for (ObjectPrompt o : objects) {
            seeds.add(new TrackPrompts.Seed(o, generation));
        }
        return new TrackPrompts(seeds, generation);
    }

    private static TrackedFrame step(ObjectTracker t, int i, TrackPrompts p) {
        return t.step(i, W, H, scene.embeddings.get(i), p);
    }

    private static Map<Integer, ObjectMask> byId(TrackedFrame f) {
        Map<Integer, ObjectMask> m = new TreeMap<>();
        f.objects().forEach(o -> m.put(o.id(), o));
        return m;
    }

    @Test
    void movingObjectsKeepTheirIdsAndTheirMasksFollowThem() {
        TrackingMeters meters = TrackingMeters.none();
        ObjectTracker tracker = tracker(meters);
        TrackPrompts p = prompts(0, boxOf(0, 0), boxOf(1, 1), boxOf(2, 2), boxOf(3, 3));
        double[] sum = new double[4];
        double[] fixedSum = new double[4];
        for (int i = 0; i < FRAMES; i++) {
            TrackedFrame f = step(tracker, i, p);
            assertEquals(List.of(), f.lost());
            assertEquals(List.of(0, 1, 2, 3), f.objects().stream().map(ObjectMask::id).toList(), "frame " + i);
            for (ObjectMask o : f.objects()) {
                double iou = DemoScene.iou(DemoScene.decode(o), scene.truth(o.id(), i));
                assertTrue(iou >= 0.8, "frame " + i + " object " + o.id() + ": IoU " + iou);
                sum[o.id()] += iou;
            }
            assertEquals(4, meters.active().get());
        }
        for (int k = 0; k < 4; k++) {
            assertTrue(sum[k] / FRAMES >= 0.9, "object " + k + ": mean IoU " + sum[k] / FRAMES);
        }
        // The shapes did move: frame 0's boxes, decoded as fixed prompts, miss them by the last frame.
        ObjectTracker fixed = tracker(TrackingMeters.none());
        int last = FRAMES - 1;
        for (int k = 0; k < 4; k++) {
            TrackedFrame f = fixed.step(last, W, H, scene.embeddings.get(last), prompts(0, boxOf(k, k)));
            fixedSum[k] = f.objects().isEmpty() ? 0 : DemoScene.iou(DemoScene.decode(f.objects().get(0)),
                    scene.truth(k, last));
        }
        double fixedMean = (fixedSum[0] + fixedSum[1] + fixedSum[2] + fixedSum[3]) / 4;
        assertTrue(fixedMean < 0.7, "frame 0's boxes still fit the last frame (" + fixedMean + "): nothing moved");
    }

    /** A point that lies on the background in every frame of the clip (none of the shapes' boxes covers it). */
    private static double[] backgroundPoint() {
        for (int y = 10; y < H; y += 10) {
            for (int x = 10; x < W; x += 10) {
                boolean clear = true;
                for (int i = 0; i < FRAMES && clear; i++) {
                    for (PatternObject o : scene.source.objectsAt(i)) {
                        int[] b = o.box();
                        clear &= x < b[0] - 8 || x > b[2] + 8 || y < b[1] - 8 || y > b[3] + 8;
                    }
                }
                if (clear) {
                    return new double[] {x, y};
                }
            }
        }
        throw new AssertionError("no background point in the clip");
    }

    @Test
    void anObjectOnTheBackgroundIsLostOnceAndStaysLostUntilItsPromptChanges() {
        TrackingMeters meters = TrackingMeters.none();
        ObjectTracker tracker = tracker(meters);
        double[] bg = backgroundPoint();
        ObjectPrompt nothing = new ObjectPrompt(9, new double[][] {{bg[0], bg[1]}}, null);
        TrackPrompts p = prompts(0, boxOf(3, 3), nothing);
        List<Integer> lostAt = new ArrayList<>();
        int changeAt = 10;
        for (int i = 0; i < changeAt; i++) {
            TrackedFrame f = step(tracker, i, p);
            Set<Integer> ids = byId(f).keySet();
            assertTrue(ids.contains(3), "the real object goes on: frame " + i);
            for (ObjectMask o : f.objects()) {
                assertTrue(o.area() > 0, "frame " + i + ": object " + o.id() + " published with an empty mask");
            }
            // Every frame of object 9 is bad: never published, listed as hidden while it coasts, then lost once.
            assertFalse(ids.contains(9), "frame " + i + ": a bad frame's mask is not published");
            if (f.lost().contains(9)) {
                lostAt.add(i);
            }
            if (!lostAt.isEmpty()) {
                assertFalse(f.hidden().contains(9), "frame " + i + ": a lost object is not hidden");
            } else {
                assertEquals(List.of(9), f.hidden(), "frame " + i + ": coasting until lost");
            }
            assertFalse(f.lost().contains(3));
        }
        assertEquals(List.of(SETTINGS.lostAfter() - 1), lostAt, "lost once, after lost-after bad frames");
        assertEquals(1.0, meters.lost().count());
        assertEquals(1, meters.active().get());

        // A new prompt for the id (an update: a new revision) seeds it again, on shape 0 now.
        PatternObject shape0 = scene.source.objectsAt(changeAt).get(0);
        ObjectPrompt again = new ObjectPrompt(9, null, new double[] {Math.max(0, shape0.box()[0]),
            Math.max(0, shape0.box()[1]), Math.min(W, shape0.box()[2]), Math.min(H, shape0.box()[3])});
        TrackPrompts updated = new TrackPrompts(List.of(new TrackPrompts.Seed(boxOf(3, 3), 0),
                new TrackPrompts.Seed(again, 1)), 0);
        for (int i = changeAt; i < FRAMES; i++) {
            TrackedFrame f = step(tracker, i, updated);
            ObjectMask o = byId(f).get(9);
            assertNotNull(o, "frame " + i + ": object 9 is back");
            assertTrue(DemoScene.iou(DemoScene.decode(o), scene.truth(0, i)) >= 0.8, "frame " + i);
            assertEquals(List.of(), f.lost());
        }
        assertEquals(1.0, meters.lost().count());
    }

    @Test
    void removedObjectsEndAndAResetSeedsEveryObjectAgain() {
        ObjectTracker tracker = tracker(TrackingMeters.none());
        for (int i = 0; i < 3; i++) {
            step(tracker, i, prompts(0, boxOf(0, 0), boxOf(1, 1)));
        }
        TrackedFrame f = step(tracker, 3, prompts(0, boxOf(0, 0)));
        assertEquals(Set.of(0), byId(f).keySet());
        assertEquals(List.of(), f.lost(), "a removed object is not lost");
        assertEquals(List.of(0), tracker.tracks().stream().map(Track::id).toList());
        assertEquals(0, tracker.tracks().get(0).bornFrame());

        // A reset (a new generation): frame 0's box seeds object 0 again, wherever the old track was.
        // (Frame 0's box may miss shape 0 by frame 4: a bad seed is not published but coasts, hidden.)
        f = step(tracker, 4, prompts(5, boxOf(0, 0), boxOf(1, 1)));
        Set<Integer> seeded = new java.util.TreeSet<>(byId(f).keySet());
        seeded.addAll(f.hidden());
        assertEquals(Set.of(0, 1), seeded);
        assertEquals(List.of(4L, 4L), tracker.tracks().stream().map(Track::bornFrame).toList());
    }

    @Test
    void twoPromptsOnOneObjectMergeIntoTheOlderId() {
        ObjectTracker tracker = tracker(TrackingMeters.none());
        TrackedFrame f = step(tracker, 0, prompts(0, boxOf(5, 3), boxOf(6, 3), boxOf(1, 1)));
        assertEquals(Set.of(1, 5), byId(f).keySet());
        assertEquals(List.of(6), f.lost(), "a merged duplicate is reported lost");
        f = step(tracker, 1, prompts(0, boxOf(5, 3), boxOf(6, 3), boxOf(1, 1)));
        assertEquals(Set.of(1, 5), byId(f).keySet(), "and it is not seeded again under the same prompt");
        assertEquals(List.of(), f.lost(), "reported once");
    }

    @Test
    void discoveredObjectsBecomeTracksWithIdsClearOfThePromptedOnes() {
        // A discovery that proposes shapes 0 and 2 (decoded from their true boxes) on every key frame.
        FrameGeometry g = new FrameGeometry(W, H, DemoScene.backend().config().imageSize(),
                DemoScene.backend().config().lowResSize());
        int[] calls = {0};
        ObjectDiscovery finder = (embedding, width, height, covered) -> {
            calls[0]++;
            // The hint: shape 0 (prompted, tracked) is covered at its centre, shape 2 (not yet found) is not.
            long at = scene.embeddings.indexOf(embedding.toTensor());
            PatternObject s0 = scene.source.objectsAt(at).get(0);
            assertTrue(covered[s0.centerY() * width + s0.centerX()], "frame " + at + ": shape 0 is covered");
            long index = scene.embeddings.indexOf(embedding.toTensor());
            List<ObjectDiscovery.Found> found = new ArrayList<>();
            for (int k : new int[] {0, 2}) {
                int[] b = scene.source.objectsAt(index).get(k).box();
                double[] box = {Math.max(0, b[0]), Math.max(0, b[1]), Math.min(W, b[2]), Math.min(H, b[3])};
                DecoderOutput out = DemoScene.backend().decode(embedding.toTensor(), new Prompt(null, null, g.modelBox(box), null),
                        false);
                found.add(new ObjectDiscovery.Found(out.lowResLogits(), out.iouPredictions()[0], 0.95f, box, 100));
            }
            return found;
        };
        TrackingMeters meters = TrackingMeters.none();
        ObjectTracker tracker = new ObjectTracker("t", DemoScene.backend(), SETTINGS,
                new Discovery(finder, 4, 0.5), meters);
        int discovered = PromptSpec.DISCOVERED_ID_BASE;
        for (int i = 0; i < 10; i++) {
            TrackedFrame f = step(tracker, i, prompts(0, boxOf(0, 0)));
            assertEquals(Set.of(0, discovered), byId(f).keySet(), "frame " + i + ": shape 0 is prompted already,"
                    + " shape 2 is found once and then followed");
            double iou = DemoScene.iou(DemoScene.decode(byId(f).get(discovered)), scene.truth(2, i));
            assertTrue(iou >= 0.8, "frame " + i + ": the discovered object follows shape 2, IoU " + iou);
        }
        assertEquals(3, calls[0], "key frames 0, 4 and 8");
        assertEquals(1.0, meters.discovered().count());
        assertEquals(Set.of(Track.Origin.PROMPTED, Track.Origin.DISCOVERED),
                tracker.tracks().stream().map(Track::origin).collect(Collectors.toSet()));

        // Removed through the prompts topic: its track ends (not lost) and the prompted one goes on.
        TrackPrompts p = prompts(0, boxOf(0, 0));
        TrackedFrame f = step(tracker, 10, new TrackPrompts(p.objects(), p.generation(), Set.of(discovered)));
        assertEquals(Set.of(0), byId(f).keySet());
        assertEquals(List.of(), f.lost());
        assertEquals(Set.of(0), tracker.tracks().stream().map(Track::id).collect(Collectors.toSet()));
    }

    @Test
    void discoveryStopsAtTheStreamsObjectLimit() {
        // Issue #31: a discovery that proposes shapes 1, 2 and 3 on every key frame, one prompted shape, at most 2
        // objects a stream: one discovered object, never more, and the prompted one goes on.
        FrameGeometry g = new FrameGeometry(W, H, DemoScene.backend().config().imageSize(),
                DemoScene.backend().config().lowResSize());
        ObjectDiscovery finder = (embedding, width, height, covered) -> {
            long index = scene.embeddings.indexOf(embedding.toTensor());
            List<ObjectDiscovery.Found> found = new ArrayList<>();
            for (int k : new int[] {1, 2, 3}) {
                int[] b = scene.source.objectsAt(index).get(k).box();
                double[] box = {Math.max(0, b[0]), Math.max(0, b[1]), Math.min(W, b[2]), Math.min(H, b[3])};
                DecoderOutput out = DemoScene.backend().decode(embedding.toTensor(), new Prompt(null, null, g.modelBox(box), null),
                        false);
                found.add(new ObjectDiscovery.Found(out.lowResLogits(), out.iouPredictions()[0], 0.95f, box, 100));
            }
            return found;
        };
        TrackingMeters meters = TrackingMeters.none();
        ObjectTracker tracker = new ObjectTracker("t", DemoScene.backend(), SETTINGS, new Discovery(finder, 2, 0.5, 2),
                meters);
        for (int i = 0; i < 8; i++) {
            TrackedFrame f = step(tracker, i, prompts(0, boxOf(0, 0)));
            assertTrue(byId(f).containsKey(0), "frame " + i + ": the prompted object goes on");
            assertTrue(tracker.tracks().size() <= 2, "frame " + i + ": " + tracker.tracks().size() + " objects");
        }
        assertEquals(1.0, meters.discovered().count(), "one discovered object fills the stream to its limit");
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> new Discovery(finder, 2, 0.5, 0));
    }
}
