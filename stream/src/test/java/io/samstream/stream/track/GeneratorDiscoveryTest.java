package io.samstream.stream.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.EngineSettings;
import io.samstream.config.PromptSpec;
import io.samstream.connectors.record.MaskRecord.ObjectMask;
import io.samstream.stream.track.kalman.ObjectTracker;
import io.samstream.stream.track.kalman.ObjectTrackerTest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Discovery through the real automatic mask generator on the demo model: with no prompts at all, the
 * clip's shapes are found on the first key frame, become tracks with ids from 1000000, and are followed.
 */
class GeneratorDiscoveryTest {
    static final int W = 320;
    static final int H = 240;
    static final int FRAMES = 8;
    static DemoScene scene;

    @BeforeAll
    static void encode() {
        scene = new DemoScene("d", W, H, 1, FRAMES);
    }

    @Test
    void unpromptedShapesAreDiscoveredAndFollowed() {
        // A 10 x 10 grid is enough for these shapes (and keeps the test quick); one key frame (frame 0).
        EngineSettings.Discovery settings = new EngineSettings.Discovery(true, 100, 10, 0.86, 0.92, 0.7, 100, 0.5);
        TrackingMeters meters = TrackingMeters.none();
        ObjectTracker tracker = new ObjectTracker("d", DemoScene.backend(), ObjectTrackerTest.SETTINGS,
                new Discovery(new GeneratorDiscovery(DemoScene.backend(), settings), settings.interval(),
                        settings.newObjectMaxOverlap()), meters);
        TrackPrompts none = new TrackPrompts(List.of(), 0);
        Map<Integer, Integer> shapeOf = new HashMap<>();
        for (int i = 0; i < FRAMES; i++) {
            TrackedFrame f = tracker.step(i, W, H, scene.embeddings.get(i), none);
            assertEquals(List.of(), f.lost());
            for (ObjectMask o : f.objects()) {
                assertTrue(o.id() >= PromptSpec.DISCOVERED_ID_BASE, "id " + o.id());
                boolean[] mask = DemoScene.decode(o);
                if (i == 0) {
                    // Which shape it is: the one it overlaps best.
                    int best = -1;
                    double bestIou = 0;
                    for (int k = 0; k < 4; k++) {
                        double iou = DemoScene.iou(mask, scene.truth(k, 0));
                        if (iou > bestIou) {
                            bestIou = iou;
                            best = k;
                        }
                    }
                    assertTrue(bestIou >= 0.7, "object " + o.id() + " is a shape (IoU " + bestIou + ")");
                    shapeOf.put(o.id(), best);
                } else {
                    double iou = DemoScene.iou(mask, scene.truth(shapeOf.get(o.id()), i));
                    assertTrue(iou >= 0.8, "frame " + i + " object " + o.id() + " follows its shape, IoU " + iou);
                }
            }
            assertEquals(shapeOf.keySet(), f.objects().stream().map(ObjectMask::id).collect(
                    java.util.stream.Collectors.toSet()), "frame " + i + ": the same objects");
        }
        assertEquals(4, shapeOf.size(), "every shape found: " + shapeOf);
        assertEquals(4, Map.copyOf(shapeOf).values().stream().distinct().count(), "each once: " + shapeOf);
        assertEquals(4.0, meters.discovered().count());
    }
}
