package io.samstream.stream.track.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.gpu.ModelCheckpoints;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Model;
import io.samstream.stream.track.MaskReadout;
import io.samstream.stream.track.TrackPrompts;
import io.samstream.stream.track.TrackedFrame;
import io.samstream.stream.track.TrackingMeters;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@link MemoryTracker}'s lost objects whose memory is kept ({@code memory-forget-after}): found again under their id
 * when the model scores them visible, clear of the others, {@code memory-found-after} frames in a row; forgotten
 * (memory freed) after the window; never published on another object's region. The model is {@link ScriptedSam2}
 * (object scores and masks by script, at the tiny SAM 2 fixture's input size).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MemoryRefindTest {
    static final int W = 128;
    static final int H = 96;
    /** Where the scripts put objects, in low-resolution cells (16 a side). */
    static final int[] LEFT = {1, 1, 5, 5};
    static final int[] RIGHT = {8, 8, 14, 14};
    static final int[] ON_RIGHT = {9, 9, 14, 14};

    private Sam2Config config;
    private final TestPatternSource clip = new TestPatternSource("clip", W, H, 10, 40, 3, false);

    @BeforeAll
    void load() {
        try (Sam2Model m = ModelCheckpoints.openSam2(MemoryTrackerTest.SAM2_TINY, 1)) {
            config = m.config();
        }
    }

    private static TrackPrompts box(long revision, int... ids) {
        List<TrackPrompts.Seed> seeds = new ArrayList<>();
        for (int id : ids) {
            seeds.add(new TrackPrompts.Seed(new ObjectPrompt(id, null, new double[] {10 + id, 10, 60 + id, 60}),
                    revision));
        }
        return new TrackPrompts(seeds, 0);
    }

    private static List<Integer> ids(TrackedFrame f) {
        return f.masks().stream().map(MaskReadout.Readout::id).toList();
    }

    private TrackedFrame step(MemoryTracker t, int f, TrackPrompts prompts) {
        return t.step(f, W, H, clip.render(f), prompts);
    }

    @Test
    void anObjectThatComesBackAfterItWasLostIsFoundAgainUnderItsIdAndRevision() {
        // Visible on steps 0-1, absent 2-9, back from 10 on.
        ScriptedSam2 model = new ScriptedSam2(config, (id, s) -> s < 2 || s >= 10 ? LEFT : null, 0);
        TrackingMeters meters = TrackingMeters.none();
        MemoryTracker t = new MemoryTracker("s", model, 3, 20, 2, meters);
        for (int f = 0; f < 2; f++) {
            assertEquals(List.of(1), ids(step(t, f, box(1, 1))), "frame " + f);
        }
        for (int f = 2; f < 4; f++) {
            TrackedFrame r = step(t, f, box(1, 1));
            assertEquals(List.of(1), r.hidden(), "frame " + f);
            assertEquals(List.of(), r.lost());
        }
        TrackedFrame lost = step(t, 4, box(1, 1));
        assertEquals(List.of(1), lost.lost(), "the third hidden frame in a row");
        assertEquals(List.of(), lost.hidden());
        assertEquals(List.of(1), t.remembered(), "its memory kept");
        assertEquals(List.of(1), t.objects(), "still stepped by the model");
        assertEquals(1, model.held());
        for (int f = 5; f < 11; f++) { // gone, then seen once (frame 10): not published yet
            TrackedFrame r = step(t, f, box(1, 1));
            assertEquals(List.of(), r.masks(), "frame " + f + ": unpublished while lost");
            assertEquals(List.of(), r.hidden(), "frame " + f + ": lost, not hidden");
            assertEquals(List.of(), r.lost(), "frame " + f + ": reported lost once");
        }
        TrackedFrame found = step(t, 11, box(1, 1));
        assertEquals(List.of(1), ids(found), "seen clear on 2 frames in a row: found again under its id");
        MaskSummary m = found.masks().get(0).summary();
        assertTrue(m.area() > 0 && m.box()[0] < W / 2 && m.box()[1] < H / 2, "the object's own mask " + m);
        assertEquals(1.0, meters.reidentified().count());
        assertEquals(1.0, meters.lost().count());
        assertEquals(List.of(), t.remembered());
        assertEquals(1, model.prompted.size(), "found from its memory, never prompted again");
        for (int f = 12; f < 15; f++) {
            assertEquals(List.of(1), ids(step(t, f, box(1, 1))), "frame " + f);
        }
        MemoryTrackerState s = t.state(14);
        assertEquals(List.of(1), s.ids(), "tracked again");
        assertEquals(1, s.objects().get(0).revision(), "under its revision");
        assertEquals(java.util.Map.of(), s.ended());
        // Its usual life from here on: hidden, then lost again.
        ScriptedSam2 twice = new ScriptedSam2(config, (id, st) -> st < 2 || (st >= 10 && st < 14) ? LEFT : null, 0);
        MemoryTracker u = new MemoryTracker("u", twice, 3, 20, 2, TrackingMeters.none());
        List<Integer> lostOn = new ArrayList<>();
        for (int f = 0; f < 20; f++) {
            if (!step(u, f, box(1, 1)).lost().isEmpty()) {
                lostOn.add(f);
            }
        }
        assertEquals(List.of(4, 16), lostOn, "lost again three hidden frames after it left again");
    }

    @Test
    void anObjectThatNeverComesBackIsForgottenAfterTheWindowAndItsMemoryFreed() {
        ScriptedSam2 model = new ScriptedSam2(config, (id, s) -> s < 2 ? LEFT : null, 0);
        MemoryTracker t = new MemoryTracker("s", model, 3, 5, 2, TrackingMeters.none());
        for (int f = 0; f < 4; f++) {
            step(t, f, box(1, 1));
        }
        assertEquals(List.of(1), step(t, 4, box(1, 1)).lost());
        for (int f = 5; f < 9; f++) {
            TrackedFrame r = step(t, f, box(1, 1));
            assertEquals(List.of(), r.hidden(), "frame " + f);
            assertEquals(List.of(1), t.remembered(), "frame " + f + ": within 5 frames of being lost");
        }
        TrackedFrame forgotten = step(t, 9, box(1, 1)); // the 5th frame after it was lost
        assertEquals(List.of(), forgotten.lost(), "reported lost once only");
        assertEquals(List.of(), t.remembered());
        assertEquals(List.of(), t.objects(), "its memory dropped");
        assertEquals(0, model.held(), "the model holds nothing for it (a GPU bank freed)");
        for (int f = 10; f < 12; f++) { // the same prompt: stays lost, the frame not even encoded
            TrackedFrame r = step(t, f, box(1, 1));
            assertEquals(List.of(), r.hidden());
            assertEquals(List.of(), r.lost());
        }
        assertEquals(List.of(1), step(t, 12, box(2, 1)).hidden(), "a re-prompt starts it afresh");
        assertEquals(2, model.prompted.size());
    }

    @Test
    void aReturningMaskOnAnotherObjectsRegionIsNotPublished() {
        // Object 2 stays on the right; object 1 leaves the left, is lost, comes back onto object 2 (frames 6-11),
        // then shows on the left again (12 on).
        ScriptedSam2 model = new ScriptedSam2(config, (id, s) -> id == 2 ? RIGHT
                : s < 2 ? LEFT : s < 6 ? null : s < 12 ? ON_RIGHT : LEFT, 0);
        TrackingMeters meters = TrackingMeters.none();
        MemoryTracker t = new MemoryTracker("s", model, 3, 30, 2, meters);
        List<Integer> foundOn = new ArrayList<>();
        for (int f = 0; f < 16; f++) {
            TrackedFrame r = step(t, f, box(1, 1, 2));
            assertTrue(ids(r).contains(2), "frame " + f + ": object 2 keeps its region");
            if (f >= 4 && f < 13) {
                assertEquals(List.of(2), ids(r), "frame " + f + ": object 1's mask on object 2 is not published");
            }
            if (f >= 13) {
                assertEquals(List.of(1, 2), ids(r), "frame " + f + ": in prompt order");
            }
            if (meters.reidentified().count() > foundOn.size()) {
                foundOn.add(f);
            }
        }
        assertEquals(List.of(13), foundOn, "found on its second clear frame (12, 13), not on object 2");
    }

    @Test
    void aMaskBackFromHiddenMostlyOnAnotherShownObjectStaysHidden() {
        // Object 1 is hidden on steps 2-3, back on object 2's region on 4-5, then on its own again.
        ScriptedSam2 model = new ScriptedSam2(config, (id, s) -> id == 2 ? RIGHT
                : s < 2 || s >= 6 ? LEFT : s < 4 ? null : ON_RIGHT, 0);
        MemoryTracker t = new MemoryTracker("s", model, 10, 30, 2, TrackingMeters.none());
        for (int f = 0; f < 8; f++) {
            TrackedFrame r = step(t, f, box(1, 1, 2));
            boolean shown = f < 2 || f >= 6;
            assertEquals(shown ? List.of(1, 2) : List.of(2), ids(r), "frame " + f);
            assertEquals(shown ? List.of() : List.of(1), r.hidden(), "frame " + f);
        }
    }

    /**
     * An object back from hidden and a lost one whose memory is kept claim one region on the same frames: the one
     * the model is surer of (object score) has it, the other is not shown there.
     */
    @Test
    void ofTwoClaimsOnOneRegionTheSurerObjectScoreHasIt() {
        // Object 2 is seen on steps 0-1, then gone (lost at 4), back on the right from step 8 (score 5). Object 1
        // is seen elsewhere on 0-5, hidden on 6-7, and from 8 on it has object 2's region, scored 0.5.
        ScriptedSam2.Script script = (id, s) -> id == 2 ? (s < 2 ? LEFT : s < 8 ? null : RIGHT)
                : s < 6 ? new int[] {1, 10, 4, 14} : s < 8 ? null : ON_RIGHT;
        TrackingMeters meters = TrackingMeters.none();
        MemoryTracker t = new MemoryTracker("s", new ScriptedSam2(config, script, 0).scores((id, s) -> id == 1
                && s >= 8 ? 0.5f : 5f), 3, 30, 2, meters);
        List<List<Integer>> shown = new ArrayList<>();
        for (int f = 0; f < 12; f++) {
            shown.add(ids(step(t, f, box(1, 1, 2))));
        }
        assertEquals(List.of(1, 2), shown.get(0));
        for (int f = 4; f < 9; f++) {
            assertEquals(List.of(), shown.get(f).stream().filter(i -> i == 2).toList(), "frame " + f);
        }
        for (int f = 8; f < 12; f++) {
            assertTrue(!shown.get(f).contains(1), "frame " + f + ": object 1 never shown on object 2's region");
        }
        for (int f = 9; f < 12; f++) {
            assertEquals(List.of(2), shown.get(f), "frame " + f + ": object 2 found again on its second clear frame");
        }
        assertEquals(1.0, meters.reidentified().count());

        // The other way round: the lost object less sure than the one back from hidden is not found there.
        TrackingMeters other = TrackingMeters.none();
        MemoryTracker u = new MemoryTracker("u", new ScriptedSam2(config, script, 0).scores((id, s) -> id == 2
                && s >= 8 ? 0.5f : 5f), 3, 30, 2, other);
        for (int f = 0; f < 12; f++) {
            TrackedFrame r = step(u, f, box(1, 1, 2));
            if (f >= 8) {
                assertEquals(List.of(1), ids(r), "frame " + f + ": object 1 back, sure of it");
            }
        }
        assertEquals(0.0, other.reidentified().count());
    }

    @Test
    void clearMeansNeitherMaskMostlyUnderTheOther() {
        MaskSummary a = MaskSummary.of(logits(0, 0, 10, 10), 20, 20);
        assertTrue(MaskClaims.clearOf(a, List.of(MaskSummary.of(logits(10, 10, 20, 20), 20, 20))), "apart");
        assertTrue(MaskClaims.clearOf(a, List.of(MaskSummary.of(logits(8, 0, 20, 10), 20, 20))), "20 % overlap");
        assertTrue(!MaskClaims.clearOf(a, List.of(MaskSummary.of(logits(6, 0, 20, 10), 20, 20))), "40 %");
        assertTrue(!MaskClaims.clearOf(a, List.of(MaskSummary.of(logits(2, 2, 4, 4), 20, 20))),
                "a small mask wholly under it");
        assertTrue(MaskClaims.onAnother(MaskSummary.of(logits(2, 2, 4, 4), 20, 20), List.of(a)), "wholly on it");
        assertTrue(!MaskClaims.onAnother(MaskSummary.of(logits(6, 0, 20, 10), 20, 20), List.of(a)), "2/7 on it");
        assertTrue(!MaskClaims.onAnother(a, List.of(MaskSummary.of(logits(2, 2, 4, 4), 20, 20))),
                "a small mask under it takes little of it");
    }

    private static float[] logits(int x0, int y0, int x1, int y1) {
        float[] l = new float[20 * 20];
        java.util.Arrays.fill(l, -1f);
        for (int y = y0; y < y1; y++) {
            for (int x = x0; x < x1; x++) {
                l[y * 20 + x] = 1f;
            }
        }
        return l;
    }

    @Test
    void aLostObjectRepromptedWhileRememberedStartsAfresh() {
        ScriptedSam2 model = new ScriptedSam2(config, (id, s) -> s < 2 ? LEFT : null, 0);
        MemoryTracker t = new MemoryTracker("s", model, 3, 30, 2, TrackingMeters.none());
        for (int f = 0; f < 6; f++) {
            step(t, f, box(1, 1));
        }
        assertEquals(List.of(1), t.remembered());
        TrackedFrame r = step(t, 6, box(2, 1));
        assertEquals(List.of(), t.remembered());
        assertEquals(List.of(1), r.hidden(), "tracked again from its new prompt (absent on this frame)");
        assertEquals(6, model.prompted.get(1)[0], "prompted again on frame 6");
        TrackedFrame removed = step(t, 7, box(2));
        assertEquals(List.of(), removed.hidden());
        assertEquals(0, model.held(), "a removed object's memory is dropped");
    }

    @Test
    void aLostObjectWhoseMemoryIsKeptStaysLostWhenItsStreamMoves() {
        ScriptedSam2 model = new ScriptedSam2(config, (id, s) -> id == 2 || s < 2 ? LEFT : null, 0);
        MemoryTracker first = new MemoryTracker("s", model, 3, 30, 2, TrackingMeters.none());
        for (int f = 0; f < 6; f++) {
            step(first, f, box(1, 1, 2));
        }
        assertEquals(List.of(1), first.remembered());
        MemoryTrackerState s = MemoryTrackerState.fromJson(first.state(5).toJson());
        assertEquals(List.of(2), s.ids(), "only the tracked object resumes");
        assertEquals(java.util.Map.of(1, 1L), s.ended(), "the lost one is among the lost");
        TrackingMeters meters = TrackingMeters.none();
        ScriptedSam2 back = new ScriptedSam2(config, (id, st) -> LEFT, 0);
        MemoryTracker next = new MemoryTracker("s", back, 3, 30, 2, meters);
        next.restore(s);
        for (int f = 6; f < 10; f++) {
            TrackedFrame r = step(next, f, box(1, 1, 2));
            assertEquals(List.of(2), ids(r), "frame " + f);
            assertEquals(List.of(), r.lost(), "frame " + f + ": reported lost on the old engine already");
            assertEquals(List.of(), r.hidden());
        }
        assertEquals(0.0, meters.lost().count());
        assertEquals(List.of(2), next.objects(), "no memory for it here");
        assertEquals(List.of(1, 2), ids(step(next, 10, box(2, 1, 2))), "back once re-prompted");
    }

    @Test
    void badWindowsAreRefused() {
        ScriptedSam2 model = new ScriptedSam2(config, (id, s) -> LEFT, 0);
        assertThrows(IllegalArgumentException.class, () -> new MemoryTracker("s", model, 3, -1, 2,
                TrackingMeters.none()));
        assertThrows(IllegalArgumentException.class, () -> new MemoryTracker("s", model, 3, 10, 0,
                TrackingMeters.none()));
    }
}
