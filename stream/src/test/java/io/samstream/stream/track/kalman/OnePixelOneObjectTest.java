package io.samstream.stream.track.kalman;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.stream.track.kalman.AppearanceTrackingTest.Scene;
import io.samstream.stream.track.kalman.AppearanceTrackingTest.ScriptedBackend;
import io.samstream.stream.track.kalman.AppearanceTrackingTest.Square;
import io.samstream.stream.track.TrackPrompts;
import io.samstream.stream.track.TrackedFrame;
import io.samstream.stream.track.TrackingMeters;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A mask that took in its neighbour ({@link ObjectTracker}'s one-pixel-one-object rule), on a scripted scene
 * ({@link AppearanceTrackingTest}'s kit): from frame 3 on, the decoder answers the large object's prompt with both
 * squares, the small object in contact with it included (as SAM does for look-alikes in contact). The small object is
 * published as before; the large one without the small one's pixels, so no pixel is published for both.
 */
class OnePixelOneObjectTest {
    static final Square SMALL = new Square(19, 32, 5, AppearanceTrackingTest.OBJECT);
    static final Square LARGE = new Square(34, 32, 10, AppearanceTrackingTest.OBJECT);

    @Test
    void aMaskHoldingAnotherObjectsIsPublishedWithoutIt() {
        // From frame 3 the large object's prompt gets both squares (in contact: cells 14-23 and 24-43).
        ScriptedBackend backend = ScriptedBackend.ofUnions((t, c) -> {
            if (Math.abs(c[0] - SMALL.cx()) < 4) {
                return List.of(SMALL);
            }
            return Math.abs(c[0] - LARGE.cx()) < 6 ? (t < 3 ? List.of(LARGE) : List.of(LARGE, SMALL)) : List.of();
        });
        ObjectTracker tracker = new ObjectTracker("one-pixel", backend, AppearanceTrackingTest.ON, null,
                TrackingMeters.none());
        TrackPrompts prompts = AppearanceTrackingTest.prompts(
                new ObjectPrompt(0, null, box(SMALL)), new ObjectPrompt(1, null, box(LARGE)));
        int size = MergeRuleTest.SIZE;
        for (int t = 0; t < 8; t++) {
            Scene scene = new Scene(AppearanceTrackingTest.BACKGROUND, List.of(SMALL, LARGE));
            TrackedFrame f = tracker.step(t, size, size, backend.embed(t, scene), prompts);
            assertEquals(List.of(0, 1), AppearanceTrackingTest.ids(f), "frame " + t);
            boolean[] small = f.masks().get(0).summary().toRowMajor();
            boolean[] large = f.masks().get(1).summary().toRowMajor();
            int shared = 0;
            int largeArea = 0;
            for (int i = 0; i < small.length; i++) {
                shared += small[i] && large[i] ? 1 : 0;
                largeArea += large[i] ? 1 : 0;
            }
            assertEquals(0, shared, "frame " + t + ": pixels published for both objects");
            assertEquals(400, small.length == 0 ? 0 : count(small), "frame " + t + ": the small object's area");
            assertEquals(1600, largeArea, "frame " + t + ": the large object without the small one (4 px a cell)");
            assertEquals(2 * (LARGE.cx() - LARGE.half()), f.masks().get(1).box()[0], "frame " + t + ": its box");
        }
    }

    static int count(boolean[] m) {
        int n = 0;
        for (boolean b : m) {
            n += b ? 1 : 0;
        }
        return n;
    }

    static double[] box(Square s) {
        return new double[] {2 * (s.cx() - s.half()), 2 * (s.cy() - s.half()), 2 * (s.cx() + s.half()),
            2 * (s.cy() + s.half())};
    }
}
