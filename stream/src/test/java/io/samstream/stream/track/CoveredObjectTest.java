package io.samstream.stream.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.EngineSettings;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.stream.track.AppearanceTrackingTest.Scene;
import io.samstream.stream.track.AppearanceTrackingTest.ScriptedBackend;
import io.samstream.stream.track.AppearanceTrackingTest.Square;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * An object covered by another (taken over), on scripted scenes ({@link AppearanceTrackingTest}'s kit): a small
 * square moving right goes behind a large one that stays in front. Covered for good, it must be reported lost
 * within {@code lost-after} + 2 frames of being wholly covered (issue #15); coming out on the far side within
 * {@code reid-window} frames, it must be published again under its old id.
 */
class CoveredObjectTest {
    static final int SIZE = MergeRuleTest.SIZE;
    static final EngineSettings.Tracking ON = AppearanceTrackingTest.ON;
    static final int CY = 32;
    static final int HALF = 5;
    /** The occluder: low-res cells 22 to 45 across, drawn in front. */
    static final Square OCCLUDER = new Square(34, CY, 12, AppearanceTrackingTest.look(3));
    /** The object's centre moves 2 cells a frame from 5: clear up to frame 6, wholly behind from 11 to 18. */
    static final int FIRST_COVERED = 11;

    static int path(int t) {
        return 5 + 2 * t;
    }

    /** Whether the object at {@code x} shows nothing of itself behind the occluder, or all of it. */
    static boolean clear(int x) {
        return x + HALF <= 22 || x - HALF >= 46;
    }

    /** What one run publishes and reports per frame. */
    record Run(List<List<Integer>> published, List<List<Integer>> hidden, List<List<Integer>> lost) {
        int lostAt() {
            int at = -1;
            for (int t = 0; t < lost.size(); t++) {
                if (lost.get(t).contains(0)) {
                    assertEquals(-1, at, "object 0 reported lost once, again at frame " + t);
                    at = t;
                }
            }
            return at;
        }
    }

    /**
     * {@code frames} frames of the object on {@code x(t)}; the decoder answers its whole square for a prompt near
     * it only where it is clear of the occluder (a partly hidden one gives SAM no good mask), and the occluder's
     * square for the occluder's (wide) prompt.
     */
    static Run run(IntUnaryOperator x, int frames) {
        return run(x, frames, ON);
    }

    static Run run(IntUnaryOperator x, int frames, EngineSettings.Tracking settings) {
        ScriptedBackend backend = new ScriptedBackend((t, c) -> {
            if (c[2] > 16) {
                return OCCLUDER;
            }
            int ox = x.applyAsInt(t);
            return clear(ox) && Math.abs(c[0] - ox) < 6 && Math.abs(c[1] - CY) < 6
                    ? new Square(ox, CY, HALF, AppearanceTrackingTest.OBJECT) : null;
        });
        ObjectTracker tracker = new ObjectTracker("covered", backend, settings, null, TrackingMeters.none());
        TrackPrompts prompts = AppearanceTrackingTest.prompts(
                new ObjectPrompt(0, null, new double[] {2 * (path(0) - HALF), 2 * (CY - HALF), 2 * (path(0) + HALF),
                    2 * (CY + HALF)}),
                new ObjectPrompt(1, null, new double[] {2 * 22, 2 * 20, 2 * 46, 2 * 44}));
        Run run = new Run(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        for (int t = 0; t < frames; t++) {
            Scene scene = new Scene(AppearanceTrackingTest.BACKGROUND,
                    List.of(new Square(x.applyAsInt(t), CY, HALF, AppearanceTrackingTest.OBJECT), OCCLUDER));
            ObjectTracker.Frame f = tracker.step(t, SIZE, SIZE, backend.embed(t, scene), prompts);
            run.published().add(AppearanceTrackingTest.ids(f));
            run.hidden().add(f.hidden());
            run.lost().add(f.lost());
        }
        return run;
    }

    @Test
    void anObjectTakenOverIsReportedLostWithinLostAfterPlusTwoFrames() {
        // It stops behind the occluder's middle and never shows again.
        Run run = run(t -> Math.min(path(t), 34), 40);
        int lostAt = run.lostAt();
        assertTrue(lostAt >= FIRST_COVERED && lostAt <= FIRST_COVERED + ON.lostAfter() + 1,
                "wholly covered from frame " + FIRST_COVERED + ", lost at " + lostAt + " (hidden-lost-after is "
                        + ON.hiddenLostAfter() + ")");
        for (int t = 0; t < 40; t++) {
            assertEquals(t <= 6 ? List.of(0, 1) : List.of(1), run.published().get(t), "frame " + t);
            assertEquals(t > 6 && t < lostAt ? List.of(0) : List.of(), run.hidden().get(t),
                    "frame " + t + ": hidden until lost, not after");
        }
    }

    @Test
    void aCoveredObjectThatComesOutWithinTheWindowGetsItsOldId() {
        // It keeps its speed and is clear of the occluder again from frame 23.
        Run run = run(CoveredObjectTest::path, 28);
        int lostAt = run.lostAt();
        assertTrue(lostAt >= FIRST_COVERED && lostAt <= FIRST_COVERED + ON.lostAfter() + 1,
                "reported lost while covered, at " + lostAt);
        for (int t = 0; t < 28; t++) {
            assertEquals(clear(path(t)) ? List.of(0, 1) : List.of(1), run.published().get(t).stream().sorted().toList(),
                    "frame " + t + ": published under its id wherever it shows");
        }
        // Without re-identification nothing could give the id back: it coasts behind the occluder as before (up to
        // hidden-lost-after), unreported, and is taken up where it comes out.
        EngineSettings.Tracking noReid = new EngineSettings.Tracking(true, 5, 0.5, 0.6, 0.85, 30, 0.5, 0.6, 0, 0.8);
        Run coasting = run(CoveredObjectTest::path, 28, noReid);
        assertEquals(-1, coasting.lostAt(), "not lost");
        for (int t = 0; t < 28; t++) {
            assertEquals(clear(path(t)) ? List.of(0, 1) : List.of(1), coasting.published().get(t), "frame " + t);
        }
    }
}
