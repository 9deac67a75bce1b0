package io.samstream.stream.track.kalman;

import com.fasterxml.jackson.databind.ObjectMapper;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.EngineSettings;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.connectors.record.MaskRecord.ObjectMask;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.DecodeOnlyBackend;
import io.samstream.stream.track.TrackPrompts;
import io.samstream.stream.track.TrackedFrame;
import io.samstream.stream.track.TrackingMeters;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/**
 * Appearance memory, scene cuts and re-identification on scripted scenes (a fake backend, as in
 * {@link MergeRuleTest}): each frame's "embedding" gives every cell the look of what covers it (an object's
 * vector or the background's), and the "decoder" answers what the test says, with high scores, so that only the
 * tracker's own checks can tell a wrong mask. Every test also checks that no published object is empty.
 */
class AppearanceTrackingTest {
    static final int L = MergeRuleTest.L; // low-res side; 2 px per cell, 4 x 4 cells per embedding cell
    static final int SIZE = MergeRuleTest.SIZE;
    static final int SIDE = 16;
    static final int CHANNELS = 32;
    static final int HALF = 10;
    static final EngineSettings.Tracking ON = new EngineSettings.Tracking(true, 5, 0.5, 0.6, 0.85, 30);

    /** A square in low-res cells: centre, half side and look (a channel vector). */
    record Square(int cx, int cy, int half, float[] look) {
        Square(int cx, int cy, float[] look) {
            this(cx, cy, HALF, look);
        }

        boolean covers(int x, int y) {
            return Math.abs(x + 0.5 - cx) < half && Math.abs(y + 0.5 - cy) < half;
        }
    }

    static float[] look(long seed) {
        Random r = new Random(seed);
        float[] v = new float[CHANNELS];
        for (int i = 0; i < CHANNELS; i++) {
            v[i] = (float) r.nextGaussian();
        }
        return v;
    }

    /**
     * A frame: its background, blocks of 4 x 4 cells in three looks on the diagonals (so that the image has a
     * layout an object's coming and going barely changes), and its squares (front last).
     */
    record Scene(float[][] background, List<Square> squares) {
        float[] backgroundAt(int cx, int cy) {
            return background[(cx / 4 + cy / 4) % background.length];
        }
    }

    /**
     * Decodes with a scripted answer per (frame, prompt box centre and width in low-res cells): a square, or none
     * (or, made with {@link #ofUnions}, the union of several squares).
     */
    static final class ScriptedBackend extends DecodeOnlyBackend {
        final Map<Tensor, Integer> frameOf = new IdentityHashMap<>();
        final BiFunction<Integer, double[], List<Square>> answer;

        ScriptedBackend(BiFunction<Integer, double[], Square> answer) {
            this((t, c) -> {
                Square s = answer.apply(t, c);
                return s == null ? List.of() : List.of(s);
            }, true);
        }

        private ScriptedBackend(BiFunction<Integer, double[], List<Square>> answer, boolean unions) {
            super(MergeRuleTest.CONFIG, "scripted");
            this.answer = answer;
        }

        /** A backend whose answer is the union of the listed squares (none: an empty mask). */
        static ScriptedBackend ofUnions(BiFunction<Integer, double[], List<Square>> answer) {
            return new ScriptedBackend(answer, true);
        }

        /** Frame t's embedding [1, C, 16, 16]: each cell the look at its centre. */
        Tensor embed(int t, Scene scene) {
            float[] v = new float[CHANNELS * SIDE * SIDE];
            for (int cy = 0; cy < SIDE; cy++) {
                for (int cx = 0; cx < SIDE; cx++) {
                    float[] look = scene.backgroundAt(cx, cy);
                    for (Square s : scene.squares()) {
                        if (s.covers(cx * 4 + 2, cy * 4 + 2)) {
                            look = s.look();
                        }
                    }
                    for (int c = 0; c < CHANNELS; c++) {
                        v[c * SIDE * SIDE + cy * SIDE + cx] = look[c];
                    }
                }
            }
            Tensor e = new Tensor(v, 1, CHANNELS, SIDE, SIDE);
            frameOf.put(e, t);
            return e;
        }

        @Override
        public DecoderOutput decode(Tensor embedding, Prompt prompt, boolean multimask) {
            // The prompt box's centre and width in low-res cells (2 px each).
            double[] centre = {(prompt.box()[0] + prompt.box()[2]) / 4, (prompt.box()[1] + prompt.box()[3]) / 4,
                (prompt.box()[2] - prompt.box()[0]) / 2};
            List<Square> squares = answer.apply(frameOf.get(embedding), centre);
            float[] v = new float[L * L];
            Arrays.fill(v, -8);
            for (Square s : squares) {
                for (int y = 0; y < L; y++) {
                    for (int x = 0; x < L; x++) {
                        if (s.covers(x, y)) {
                            v[y * L + x] = 8;
                        }
                    }
                }
            }
            return new DecoderOutput(new Tensor(v, 1, L, L), new float[] {0.95f});
        }
    }

    static ObjectPrompt boxAt(int id, int cx, int cy) {
        return new ObjectPrompt(id, null, new double[] {2 * (cx - HALF), 2 * (cy - HALF), 2 * (cx + HALF), 2 * (cy + HALF)});
    }

    static TrackPrompts prompts(ObjectPrompt... objects) {
        List<TrackPrompts.Seed> seeds = new ArrayList<>();
        for (ObjectPrompt o : objects) {
            seeds.add(new TrackPrompts.Seed(o, 0));
        }
        return new TrackPrompts(seeds, 0);
    }

    static List<Integer> ids(TrackedFrame f) {
        List<ObjectMask> objects = f.objects();
        for (ObjectMask o : objects) {
            assertTrue(o.area() > 0, "object " + o.id() + " published with an empty mask");
        }
        return objects.stream().map(ObjectMask::id).toList();
    }

    static final float[][] BACKGROUND = {look(1), look(11), look(21)};
    static final float[] OBJECT = look(2);

    /**
     * The object drifts right; from frame 8 on the decoder answers a square of background beside it (a tenth of it
     * on the object, so that it still touches the predicted box; same area: only its look gives it away; the
     * square's own look only paints the object's, so the background is what the embedding shows there).
     */
    static List<List<Integer>> slideOntoBackground(EngineSettings.Tracking settings, List<List<Integer>> lost) {
        ScriptedBackend backend = new ScriptedBackend((t, c) -> t < 8 ? new Square(14 + t, 32, OBJECT)
                : new Square(14 + t + 18, 32, BACKGROUND[0]));
        ObjectTracker tracker = new ObjectTracker("slide", backend, settings, null, TrackingMeters.none());
        List<List<Integer>> published = new ArrayList<>();
        for (int t = 0; t < 20; t++) {
            Scene scene = new Scene(BACKGROUND, List.of(new Square(14 + t, 32, OBJECT)));
            TrackedFrame f = tracker.step(t, SIZE, SIZE, backend.embed(t, scene), prompts(boxAt(0, 14, 32)));
            published.add(ids(f));
            lost.add(f.lost());
        }
        return published;
    }

    @Test
    void aTrackThatSlidesOntoBackgroundIsNotPublishedThereAndIsReportedLost() {
        List<List<Integer>> lost = new ArrayList<>();
        List<List<Integer>> published = slideOntoBackground(ON, lost);
        for (int t = 0; t < 20; t++) {
            assertEquals(t < 8 ? List.of(0) : List.of(), published.get(t), "frame " + t + ": published");
            assertEquals(t == 12 ? List.of(0) : List.of(), lost.get(t), "frame " + t + ": lost after 5 bad frames");
        }
        // The same scene without the appearance check: the background is published as the object to the end.
        EngineSettings.Tracking off = new EngineSettings.Tracking(true, 5, 0.5, 0.6, 0.85, 30, -1, 0.6, 60, 0.8);
        List<List<Integer>> blind = slideOntoBackground(off, new ArrayList<>());
        assertEquals(List.of(0), blind.get(19), "what the check catches");
    }

    /** The object is gone from frame 5 to 13 and back at its place from 14, looking like {@code back}. */
    static List<List<Integer>> leaveAndReturn(float[] back, TrackingMeters meters, List<List<Integer>> lost) {
        return leaveAndReturn(back, meters, lost, -1);
    }

    /**
     * As above; with {@code moveAfter} >= 0 the stream moves to another engine after that frame: a new tracker
     * takes up the state the first one had then, through the state topic's JSON (failover).
     */
    static List<List<Integer>> leaveAndReturn(float[] back, TrackingMeters meters, List<List<Integer>> lost,
            int moveAfter) {
        ScriptedBackend backend = new ScriptedBackend((t, c) -> {
            boolean visible = t < 5 || t >= 14;
            return visible && Math.hypot(c[0] - 32, c[1] - 32) < 10 ? new Square(32, 32, t < 5 ? OBJECT : back) : null;
        });
        ObjectTracker tracker = new ObjectTracker("return", backend, ON, null, meters);
        List<List<Integer>> published = new ArrayList<>();
        for (int t = 0; t < 24; t++) {
            List<Square> squares = t < 5 ? List.of(new Square(32, 32, OBJECT))
                    : t >= 14 ? List.of(new Square(32, 32, back)) : List.of();
            TrackedFrame f = tracker.step(t, SIZE, SIZE, backend.embed(t, new Scene(BACKGROUND, squares)),
                    prompts(boxAt(7, 32, 32)));
            published.add(ids(f));
            lost.add(f.lost());
            if (t == moveAfter) {
                try {
                    ObjectMapper json = new ObjectMapper();
                    TrackerState state = TrackerState.fromJson(json.readTree(json.writeValueAsString(
                            tracker.state(t).toJson())));
                    tracker = new ObjectTracker("return", backend, ON, null, meters);
                    tracker.restore(state);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        }
        return published;
    }

    @Test
    void aLostObjectThatReturnsWithinTheWindowGetsItsOldId() {
        TrackingMeters meters = TrackingMeters.none();
        List<List<Integer>> lost = new ArrayList<>();
        List<List<Integer>> published = leaveAndReturn(OBJECT, meters, lost);
        for (int t = 0; t < 24; t++) {
            assertEquals(t < 5 || t >= 14 ? List.of(7) : List.of(), published.get(t), "frame " + t);
            assertEquals(t == 9 ? List.of(7) : List.of(), lost.get(t), "frame " + t + ": lost once");
        }
        assertEquals(1.0, meters.reidentified().count(), "counted");

        // Something else at its place is not the object: the id stays gone.
        TrackingMeters other = TrackingMeters.none();
        List<List<Integer>> stranger = leaveAndReturn(look(3), other, new ArrayList<>());
        for (int t = 5; t < 24; t++) {
            assertEquals(List.of(), stranger.get(t), "frame " + t + ": a stranger takes no lost id");
        }
        assertEquals(0.0, other.reidentified().count());
    }

    /** Failover keeps re-identification: the lost object's memory and probe move with the stream. */
    @Test
    void aLostObjectThatReturnsAfterTheStreamMovedGetsItsOldIdOnTheNewEngine() {
        TrackingMeters meters = TrackingMeters.none();
        List<List<Integer>> lost = new ArrayList<>();
        List<List<Integer>> published = leaveAndReturn(OBJECT, meters, lost, 10); // lost at 9, moved after 10
        for (int t = 0; t < 24; t++) {
            assertEquals(t < 5 || t >= 14 ? List.of(7) : List.of(), published.get(t), "frame " + t);
            assertEquals(t == 9 ? List.of(7) : List.of(), lost.get(t), "frame " + t + ": lost once");
        }
        assertEquals(1.0, meters.reidentified().count(), "counted on the new engine");
        // Moved while the object is still followed (after frame 2): its appearance memory moves with it, so the
        // stranger that comes back at its place later is still refused there.
        List<List<Integer>> stranger = leaveAndReturn(look(3), TrackingMeters.none(), new ArrayList<>(), 2);
        for (int t = 5; t < 24; t++) {
            assertEquals(List.of(), stranger.get(t), "frame " + t + ": a stranger takes no lost id");
        }
    }

    @Test
    void aSceneCutEndsTheFollowedObjectsAndKeepsTheOnesPromptedOnIt() {
        float[][] newBackground = {look(4), look(14), look(24)};
        float[] newObject = look(5);
        // The decoder finds the square at (24, 32) whatever the scene: a stale track would take the new object.
        ScriptedBackend backend = new ScriptedBackend((t, c) -> new Square(24, 32, t < 6 ? OBJECT : newObject));
        TrackingMeters meters = TrackingMeters.none();
        ObjectTracker tracker = new ObjectTracker("cut", backend, ON, null, meters);
        for (int t = 0; t < 10; t++) {
            Scene scene = t < 6 ? new Scene(BACKGROUND, List.of(new Square(24, 32, OBJECT)))
                    : new Scene(newBackground, List.of(new Square(24, 32, newObject)));
            TrackPrompts p = t < 6 ? prompts(boxAt(0, 24, 32)) : prompts(boxAt(0, 24, 32), boxAt(1, 24, 32));
            TrackedFrame f = tracker.step(t, SIZE, SIZE, backend.embed(t, scene), p);
            assertEquals(t < 6 ? List.of(0) : List.of(1), ids(f), "frame " + t);
            assertEquals(t == 6 ? List.of(0) : List.of(), f.lost(), "frame " + t);
        }
        assertEquals(1.0, meters.sceneCuts().count());
    }

    @Test
    void aMaskThatCreepsOntoItsOccluderIsNotPublished() {
        // A small square passes behind a large one of the same look (appearance cannot tell them apart); the decoder
        // keeps answering the small one's whole square where it is, so its mask moves into the large one's, a little
        // each frame, and grows, slowly enough that it always matches its previous mask (the large one's own prompt,
        // a large box, gets the large square).
        Square occluder = new Square(44, 32, 14, OBJECT);
        ScriptedBackend backend = new ScriptedBackend((t, c) -> c[2] > 26 ? occluder
                : new Square(24 + t, 32, 6 + Math.max(0, t - 6) / 2, OBJECT));
        ObjectTracker tracker = new ObjectTracker("creep", backend, ON, null, TrackingMeters.none());
        List<Integer> lost = new ArrayList<>();
        for (int t = 0; t < 20; t++) {
            Scene scene = new Scene(BACKGROUND, List.of(new Square(24 + t, 32, 6, OBJECT), occluder));
            TrackedFrame f = tracker.step(t, SIZE, SIZE, backend.embed(t, scene),
                    prompts(new ObjectPrompt(0, null, new double[] {36, 52, 60, 76}),
                            new ObjectPrompt(1, null, new double[] {60, 36, 116, 92})));
            List<Integer> ids = ids(f);
            assertTrue(ids.contains(1), "frame " + t + ": the occluder");
            if (f.lost().contains(0)) {
                lost.add(t);
            }
            if (t >= 16) {
                assertEquals(List.of(1), ids, "frame " + t + ": the small square's mask lies in the large one");
            }
            if (t >= 12) {
                // Wholly behind the large one from frame 12: it coasts there until it is lost as covered.
                assertEquals(lost.isEmpty() ? List.of(0) : List.of(), f.hidden(), "frame " + t + ": hidden until lost");
            }
        }
        assertEquals(1, lost.size(), "lost once: " + lost);
        assertTrue(lost.get(0) <= 12 + ON.lostAfter() + 1, "covered from frame 12, lost at " + lost.get(0));
    }

    /**
     * The object (40 px across) is seen until frame 4 at x = 40 px, gone from frame 5 (lost at 9), and from frame 14 on
     * stands at x = {@code backAt} px, where only a probe whose box is centred on it finds it: the probe at its last
     * box finds nothing. Returns the published ids per frame.
     */
    static List<List<Integer>> reappearElsewhere(EngineSettings.Tracking settings, int backAt, TrackingMeters meters) {
        int back = backAt / 2; // low-res cells
        ScriptedBackend backend = new ScriptedBackend((t, c) -> {
            if (t < 5) {
                return Math.hypot(c[0] - 20, c[1] - 32) < 6 ? new Square(20, 32, OBJECT) : null;
            }
            // A prompt box centred on the object finds it.
            return t >= 14 && Math.abs(c[0] - back) < HALF && Math.abs(c[1] - 32) < HALF ? new Square(back, 32, OBJECT)
                    : null;
        });
        ObjectTracker tracker = new ObjectTracker("elsewhere", backend, settings, null, meters);
        List<List<Integer>> published = new ArrayList<>();
        for (int t = 0; t < 24; t++) {
            List<Square> squares = t < 5 ? List.of(new Square(20, 32, OBJECT))
                    : t >= 14 ? List.of(new Square(back, 32, OBJECT)) : List.of();
            TrackedFrame f = tracker.step(t, SIZE, SIZE, backend.embed(t, new Scene(BACKGROUND, squares)),
                    prompts(boxAt(7, 20, 32)));
            published.add(ids(f));
        }
        return published;
    }

    static EngineSettings.Tracking search(double reach, double speed) {
        return new EngineSettings.Tracking(ON.enabled(), ON.lostAfter(), ON.minPredictedIou(), ON.minStability(),
                ON.mergeIou(), ON.hiddenLostAfter(), ON.minAppearance(), ON.sceneCutSimilarity(), ON.reidWindow(),
                ON.reidAppearance(), ON.mode(), ON.cameraMotion(), reach, speed);
    }

    /**
     * The appearance search (reid-search): a lost object that comes back near its last box, but out of it, is found
     * where the image looks like it; one that comes back farther than it could have gone is not, although it looks
     * just like it (a look-alike, as far as the tracker can tell): without the reach limit it would be.
     */
    @Test
    void aLostObjectIsSearchedForOnlyAsFarAsItCouldHaveGone() {
        EngineSettings.Tracking halfSize = search(0.5, 0.1); // probes centred 20 px from its last box (20..60 px) at most
        TrackingMeters meters = TrackingMeters.none();
        List<List<Integer>> near = reappearElsewhere(halfSize, 72, meters); // 12 px beyond its last box
        for (int t = 0; t < 24; t++) {
            assertEquals(t < 5 || t >= 14 ? List.of(7) : List.of(), near.get(t), "near, frame " + t);
        }
        assertEquals(1.0, meters.reidentified().count(), "found where it looks like it");
        List<List<Integer>> notSearched = reappearElsewhere(search(0, 0.1), 72, TrackingMeters.none());
        assertEquals(List.of(), notSearched.get(20), "reid-search = 0: probed at its last box only, never found");

        TrackingMeters farMeters = TrackingMeters.none();
        List<List<Integer>> far = reappearElsewhere(halfSize, 104, farMeters); // 44 px beyond: out of reach
        for (int t = 5; t < 24; t++) {
            assertEquals(List.of(), far.get(t), "far, frame " + t + ": too far to be the lost object");
        }
        assertEquals(0.0, farMeters.reidentified().count());
        List<List<Integer>> ungated = reappearElsewhere(search(100, 100), 104, TrackingMeters.none());
        assertEquals(List.of(7), ungated.get(14), "what the reach limit refuses: without it the look-alike takes the id");

        // The reach grows with the frames since it was seen: 0.01 sizes a frame is 4 px at frame 14, too little even
        // for the near place.
        List<List<Integer>> slow = reappearElsewhere(search(0.5, 0.01), 72, TrackingMeters.none());
        assertEquals(List.of(), slow.get(14), "slow: not yet within reach at frame 14");
    }
}
