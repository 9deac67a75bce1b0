package io.samstream.stream.track.concept;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.samstream.gpu.sam3.video.Concept;
import io.samstream.gpu.sam3.video.TrackedObject;
import io.samstream.gpu.sam3.video.VideoStep;
import io.samstream.stream.track.MaskReadout;
import io.samstream.stream.track.TrackedFrame;
import java.util.List;
import org.junit.jupiter.api.Test;

/** SAM 3's steps as records need them: ids, hidden and lost objects, and the objects each step found. */
class ConceptFramesTest {
    private static final Concept CAR = new Concept("car", List.of());
    private static final int BASE = 1_000_000;

    private static TrackedObject object(long id, boolean shown) {
        boolean[] mask = new boolean[4 * 4];
        mask[5] = shown;
        return new TrackedObject(id, CAR, 0.9f, 0.8f, new int[] {1, 1, 2, 2}, mask, 4, 4);
    }

    private static VideoStep step(int frame, List<TrackedObject> objects, List<Long> lost, List<Long> dropped) {
        return new VideoStep(frame, objects, List.of(), lost, dropped);
    }

    private static List<Integer> shown(TrackedFrame f) {
        return f.masks().stream().map(MaskReadout.Readout::id).toList();
    }

    @Test
    void newIdsAreFoundOnceAndEveryObjectEndsOnceInLost() {
        ConceptFrames frames = new ConceptFrames();
        TrackedFrame f0 = frames.of(step(0, List.of(object(0, true), object(1, false)), List.of(), List.of()));
        assertEquals(List.of(BASE), shown(f0));
        assertEquals(List.of(BASE + 1), f0.hidden(), "an empty mask is hidden");
        assertEquals(2, frames.found(), "both are new, shown or not");

        TrackedFrame f1 = frames.of(step(1, List.of(object(0, true), object(1, true), object(2, true)), List.of(),
                List.of()));
        assertEquals(List.of(BASE, BASE + 1, BASE + 2), shown(f1));
        assertEquals(1, frames.found(), "only id 2 is new");

        TrackedFrame f2 = frames.of(step(2, List.of(object(0, true)), List.of(1L), List.of()));
        assertEquals(List.of(BASE + 1), f2.lost());
        assertEquals(0, frames.found());

        // 1 ends after it was reported lost (not again); 2 ends without it (listed now, once).
        TrackedFrame f3 = frames.of(step(3, List.of(object(0, true)), List.of(), List.of(1L, 2L)));
        assertEquals(List.of(BASE + 2), f3.lost());
        assertEquals(0, frames.found(), "an id seen before is not found again");
    }
}
