package io.samstream.gpu.sam2;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** Streaming behaviour of the tracker on the tiny fixture model: objects on any frame, bounded memory. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class Sam2VideoTrackerTest {
    private Sam2Model model;

    @BeforeAll
    void load() {
        StateDict sd = CheckpointLoader.load(Sam2ReferenceParityTest.DIR.resolve("checkpoint.pt"));
        model = new Sam2Model(sd, Sam2ConfigInference.infer(sd, Sam2ReferenceParityTest.TINY), 2);
    }

    @AfterAll
    void close() {
        model.close();
    }

    private float[] frame(int t) {
        return model.normalize(SyntheticClip.frame(t % 12, 128));
    }

    @Test
    void objectsJoinOnAnyFrameAndMemoryStaysFlat() {
        Sam2VideoTracker tracker = new Sam2VideoTracker(model);
        long held = -1;
        for (int t = 0; t < 20; t++) {
            List<ObjectPrompt> prompts = t == 0 ? List.of(ObjectPrompt.box(1, 20, 32, 44, 56))
                    : t == 3 ? List.of(ObjectPrompt.point(7, 76, 83, true)) : List.of();
            List<ObjectResult> results = tracker.track(frame(t), prompts);
            assertEquals(t < 3 ? 1 : 2, results.size());
            assertEquals(1, results.get(0).objectId());
            assertEquals(t == 0, results.get(0).conditioning());
            if (t >= 3) {
                assertEquals(7, results.get(1).objectId());
                assertEquals(t == 3, results.get(1).conditioning());
                assertEquals(32 * 32, results.get(1).lowResLogits().length);
                assertEquals(64, results.get(1).objectPointer().length);
            }
            if (t >= 18) { // past the 15-frame pointer horizon of object 7
                long now = tracker.bank(1).heldFloats() + tracker.bank(7).heldFloats();
                if (held < 0) {
                    held = now;
                }
                assertEquals(held, now, "memory held on frame " + t);
            }
        }
        assertEquals(3, tracker.bank(7).conditioningFrames().get(0).frame());
        assertEquals(15, tracker.bank(1).trackedCount());
        assertEquals(20, tracker.nextFrame());
    }

    @Test
    void aNewPromptForATrackedIdStartsItAfresh() {
        Sam2VideoTracker tracker = new Sam2VideoTracker(model);
        tracker.track(frame(0), List.of(ObjectPrompt.box(1, 20, 32, 44, 56)));
        tracker.track(frame(1), List.of());
        List<ObjectResult> r = tracker.track(frame(2), List.of(ObjectPrompt.point(1, 30, 40, true)));
        assertEquals(1, r.size());
        assertTrue(r.get(0).conditioning());
        assertEquals(2, tracker.bank(1).conditioningFrames().get(0).frame());
        assertEquals(0, tracker.bank(1).trackedCount());
        tracker.remove(1);
        assertTrue(tracker.track(frame(3), List.of()).isEmpty());
    }

    @Test
    void badInputsAreRefused() {
        Sam2VideoTracker tracker = new Sam2VideoTracker(model);
        assertThrows(IllegalArgumentException.class, () -> tracker.track(frame(0),
                List.of(ObjectPrompt.point(1, 3, 4, true), ObjectPrompt.point(1, 5, 6, false))));
        assertThrows(IllegalArgumentException.class, () -> model.normalize(new byte[10]));
        assertThrows(IllegalArgumentException.class, () -> new ObjectPrompt(1, null, null, null));
        assertThrows(IllegalArgumentException.class, () -> new ObjectPrompt(1, null, new float[][] {{1, 2}},
                new int[] {2}));
        assertTrue(Sam2Model.multimask(1));
        assertFalse(Sam2Model.multimask(2));
    }
}
