package io.samstream.stream.track.kalman;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.EngineSettings;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.connectors.record.MaskRecord.ObjectMask;
import io.samstream.connectors.video.PatternPainter;
import io.samstream.connectors.video.PatternPainter.Kind;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.engine.Segmenter;
import io.samstream.stream.track.kalman.AppearanceTrackingTest.Scene;
import io.samstream.stream.track.kalman.AppearanceTrackingTest.ScriptedBackend;
import io.samstream.stream.track.kalman.AppearanceTrackingTest.Square;
import io.samstream.stream.track.DemoScene;
import io.samstream.stream.track.TrackPrompts;
import io.samstream.stream.track.TrackedFrame;
import io.samstream.stream.track.TrackingMeters;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * An object covered by another (taken over), on scripted scenes ({@link AppearanceTrackingTest}'s kit): a small
 * square moving right goes behind a large one that stays in front. Covered for good, it must be reported lost
 * within {@code lost-after} + 2 frames of being wholly covered (issue #15); coming out on the far side within
 * {@code reid-window} frames, it must be published again under its old id. Last, the same on the demo model.
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
            TrackedFrame f = tracker.step(t, SIZE, SIZE, backend.embed(t, scene), prompts);
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

    // The demo model: a diamond (radius 26) moving right at 4 px a frame passes behind a box (92 x 64 px, drawn in
    // front) moving left at 2 px a frame; wholly covered while their centres are within 20 px (frames 17 to 23).
    static final int W = 320;
    static final int H = 240;
    static final int DEMO_FRAMES = 40;

    static double diamondX(int t) {
        return 60 + 4.0 * t;
    }

    static double boxX(int t) {
        return 180 - 2.0 * t;
    }

    /** The diamond's visible pixels in frame t (inside it and not under the box). */
    static boolean[] visibleDiamond(int t) {
        boolean[] m = new boolean[W * H];
        for (int y = 0; y < H; y++) {
            for (int x = 0; x < W; x++) {
                m[y * W + x] = Kind.DIAMOND.covers(26, x + 0.5 - diamondX(t), y + 0.5 - 90)
                        && !Kind.BOX.covers(46, x + 0.5 - boxX(t), y + 0.5 - 88);
            }
        }
        return m;
    }

    /** Per frame, the diamond's published mask (null where it is not published); lost frames into {@code lost}. */
    static List<boolean[]> demoRun(List<Tensor> embeddings, EngineSettings.Tracking settings, List<Integer> lost) {
        ObjectTracker tracker = new ObjectTracker("demo-covered", DemoScene.backend(), settings, null,
                TrackingMeters.none());
        TrackPrompts prompts = new TrackPrompts(List.of(
                new TrackPrompts.Seed(new ObjectPrompt(0, null, new double[] {diamondX(0) - 26, 64, diamondX(0) + 26,
                    116}), 0),
                new TrackPrompts.Seed(new ObjectPrompt(1, null, new double[] {boxX(0) - 46, 56, boxX(0) + 46, 120}), 0)),
                0);
        List<boolean[]> diamond = new ArrayList<>();
        for (int t = 0; t < DEMO_FRAMES; t++) {
            TrackedFrame f = tracker.step(t, W, H, embeddings.get(t), prompts);
            if (f.lost().contains(0)) {
                lost.add(t);
            }
            ObjectMask o = f.objects().stream().filter(m -> m.id() == 0).findFirst().orElse(null);
            diamond.add(o == null ? null : DemoScene.decode(o));
        }
        return diamond;
    }

    @Test
    void onTheDemoModelAShapeCoveredByALargerOneIsLostWhileCoveredAndFoundAgainWhereItComesOut() {
        byte[] background = PatternPainter.texturedBackground(W, H, new Random(22));
        List<VideoFrame> video = new ArrayList<>();
        int firstCovered = -1;
        int lastCovered = -1;
        for (int t = 0; t < DEMO_FRAMES; t++) {
            byte[] rgb = background.clone();
            PatternPainter.fill(rgb, W, H, Kind.DIAMOND, diamondX(t), 90, 26, PatternPainter.paletteColour(4));
            PatternPainter.fill(rgb, W, H, Kind.BOX, boxX(t), 88, 46, PatternPainter.paletteColour(1));
            video.add(new VideoFrame("demo-covered", t, t * 33L, Instant.EPOCH, W, H, rgb));
            if (LowResMask.area(visibleDiamond(t)) == 0) {
                firstCovered = firstCovered < 0 ? t : firstCovered;
                lastCovered = t;
            }
        }
        assertTrue(firstCovered > 0 && lastCovered - firstCovered >= ON.lostAfter(), "covered " + firstCovered + " to "
                + lastCovered);
        List<Tensor> embeddings = new Segmenter(DemoScene.backend(), "demo").encode(video);

        List<Integer> lost = new ArrayList<>();
        List<boolean[]> diamond = demoRun(embeddings, ON, lost);
        assertEquals(1, lost.size(), "reported lost once: " + lost);
        assertTrue(lost.get(0) <= firstCovered + ON.lostAfter() + 1, "wholly covered from frame " + firstCovered
                + ", lost at " + lost.get(0));
        for (int t = DEMO_FRAMES - 6; t < DEMO_FRAMES; t++) {
            assertTrue(diamond.get(t) != null && DemoScene.iou(diamond.get(t), visibleDiamond(t)) >= 0.8,
                    "frame " + t + ": out again and published under its id");
        }
        // Without re-identification it coasts behind the box unreported; it is published on the same frames.
        EngineSettings.Tracking noReid = new EngineSettings.Tracking(true, 5, 0.5, 0.6, 0.85, 30, 0.5, 0.6, 0, 0.8);
        List<Integer> coastingLost = new ArrayList<>();
        List<boolean[]> coasting = demoRun(embeddings, noReid, coastingLost);
        assertEquals(List.of(), coastingLost);
        for (int t = 0; t < DEMO_FRAMES; t++) {
            assertEquals(coasting.get(t) != null, diamond.get(t) != null, "frame " + t + ": published in both or neither");
        }
    }
}
