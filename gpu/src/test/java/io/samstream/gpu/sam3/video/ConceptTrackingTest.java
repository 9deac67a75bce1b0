package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.sam3.Sam3Weights;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A stream's rules end to end with known masks: the tiny video model encodes the frames, the tracker passes are
 * scripted ({@link BoxTracker}: objects move by a set velocity) and so are the detections ({@link ScriptedDetector}),
 * so matching, new objects, ids, cadence, hot-start, visibility and the memory's bounds can be checked exactly.
 */
class ConceptTrackingTest {
    static final Path VOCAB = Path.of("src/test/resources/fixtures/sam3/tokenizer/test_bpe_vocab.txt.gz");
    static final int W = 64;
    static final int H = 48;
    static final int LOW = 32;
    static final Concept CIRCLE = Concept.of("red circle");
    static final Concept SQUARE = Concept.of("square");
    static Sam3VideoModel model;
    static float[] input;

    @BeforeAll
    static void build() {
        model = new Sam3VideoModel(Sam3Weights.videoStateDict(Sam3Weights.TINY, Sam3Weights.TINY_TRACKER),
                Sam3Tokenizer.load(VOCAB), 2);
        input = new float[3 * 112 * 112];
    }

    @AfterAll
    static void close() {
        model.close();
    }

    static Sam3VideoSettings settings() {
        return Sam3VideoSettings.defaults();
    }

    record Run(Sam3VideoTracker stream, ScriptedDetector detector, BoxTracker tracker) {
        VideoStep step(int t, List<Concept> concepts) {
            detector.frame = t;
            return stream.step(input, W, H, concepts);
        }
    }

    static Run open(Sam3VideoSettings s, ScriptedDetector d, BoxTracker tr) {
        return new Run(model.openStream(s, d, tr), d, tr);
    }

    static boolean[] maskBox(int n, int x0, int y0, int x1, int y1) {
        return Masks.box(n, x0, y0, x1, y1);
    }

    static List<Long> ids(VideoStep step) {
        return step.objects().stream().map(TrackedObject::id).toList();
    }

    @Test
    void aDetectionStartsATrackThatKeepsItsIdWhenFoundAgain() {
        ScriptedDetector d = ScriptedDetector.moving(LOW, Map.of("red circle", new ScriptedDetector.Box(4, 4, 10, 10,
                0.9f)), 1, 0);
        Run run = open(settings(), d, new BoxTracker(1, 0));
        int lastX = -1;
        for (int t = 0; t < 8; t++) {
            VideoStep s = run.step(t, List.of(CIRCLE));
            assertEquals(List.of(0L), ids(s), "frame " + t);
            TrackedObject o = s.objects().get(0);
            assertEquals(CIRCLE, o.concept());
            assertEquals(0.9f, o.score(), "the starting detection's score");
            assertTrue(o.box()[0] > lastX, "the box moves right: " + java.util.Arrays.toString(o.box()));
            lastX = o.box()[0];
            assertEquals((4 + t) * W / LOW, o.box()[0], 1, "frame " + t);
        }
        assertEquals(1, run.stream().objectCount());
    }

    @Test
    void anUnmatchedConfidentDetectionStartsANewTrackAndAWeakOneDoesNot() {
        ScriptedDetector d = new ScriptedDetector(LOW, (t, c) -> {
            List<ScriptedDetector.Box> boxes = new ArrayList<>(List.of(new ScriptedDetector.Box(4, 4, 10, 10, 0.9f)));
            if (t >= 3) {
                boxes.add(new ScriptedDetector.Box(20, 20, 28, 28, 0.9f));
            }
            if (t == 2) {
                boxes.add(new ScriptedDetector.Box(20, 2, 28, 8, 0.6f)); // passes 0.5, not new_det_thresh 0.7
            }
            return boxes;
        });
        Run run = open(settings(), d, new BoxTracker(0, 0));
        assertEquals(List.of(0L), ids(run.step(0, List.of(CIRCLE))));
        run.step(1, List.of(CIRCLE));
        assertEquals(List.of(0L), ids(run.step(2, List.of(CIRCLE))));
        assertEquals(List.of(0L, 1L), ids(run.step(3, List.of(CIRCLE))));
        for (int t = 4; t < 7; t++) {
            assertEquals(List.of(0L, 1L), ids(run.step(t, List.of(CIRCLE))), "frame " + t);
        }
    }

    @Test
    void theDetectorRunsOnTheCadenceAndFindsNewObjectsThen() {
        ScriptedDetector d = new ScriptedDetector(LOW, (t, c) -> t >= 4
                ? List.of(new ScriptedDetector.Box(20, 20, 28, 28, 0.9f)) : List.of());
        Run run = open(settings().withEveryFrames(3), d, new BoxTracker(0, 0));
        List<Integer> firstSeen = new ArrayList<>();
        for (int t = 0; t < 10; t++) {
            if (!run.step(t, List.of(CIRCLE)).objects().isEmpty() && firstSeen.isEmpty()) {
                firstSeen.add(t);
            }
        }
        assertEquals(List.of(0, 3, 6, 9), d.calls);
        assertEquals(List.of(6), firstSeen, "appeared on frame 4, found on the next detection frame");
    }

    @Test
    void hotstartRemovesAYoungTrackNoDetectionConfirms() {
        ScriptedDetector d = new ScriptedDetector(LOW, (t, c) -> t == 0
                ? List.of(new ScriptedDetector.Box(4, 4, 10, 10, 0.9f)) : List.of());
        Run run = open(settings(), d, new BoxTracker(0, 0));
        for (int t = 0; t < 8; t++) {
            assertEquals(List.of(0L), ids(run.step(t, List.of(CIRCLE))), "frame " + t);
        }
        VideoStep s = run.step(8, List.of(CIRCLE));
        assertEquals(List.of(), ids(s), "unmatched on frames 1..8");
        assertEquals(List.of(0L), s.dropped());
        assertEquals(0, run.stream().objectCount());

        ScriptedDetector again = new ScriptedDetector(LOW, d.script);
        Run plain = open(Sam3VideoSettings.withoutTemporalDisambiguation(), again, new BoxTracker(0, 0));
        for (int t = 0; t < 12; t++) {
            assertEquals(List.of(0L), ids(plain.step(t, List.of(CIRCLE))), "no hot-start: frame " + t);
        }
    }

    @Test
    void aTrackOutOfSightIsHiddenThenLostOnceThenForgotten() {
        ScriptedDetector d = new ScriptedDetector(LOW, (t, c) -> t == 0
                ? List.of(new ScriptedDetector.Box(20, 4, 28, 10, 0.9f)) : List.of());
        Sam3VideoSettings s = Sam3VideoSettings.withoutTemporalDisambiguation().withBounds(64, 3, 2);
        Run run = open(s, d, new BoxTracker(8, 0)); // leaves the 32-wide map on frame 2
        List<String> events = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            VideoStep v = run.step(t, List.of(CIRCLE));
            events.add(t + ":" + ids(v) + "h" + v.hidden() + "l" + v.lost() + "d" + v.dropped());
            if (t == 5) {
                assertTrue(run.tracker().memories.live > 0, "the lost object still remembers");
            }
        }
        assertEquals(List.of("0:[0]h[]l[]d[]", "1:[0]h[]l[]d[]", "2:[]h[0]l[]d[]", "3:[]h[0]l[]d[]",
                "4:[]h[]l[0]d[]", "5:[]h[]l[]d[]", "6:[]h[]l[]d[0]", "7:[]h[]l[]d[]"), events);
        assertEquals(0, run.stream().objectCount());
        assertEquals(0, run.stream().heldFloats());
        assertEquals(0, run.tracker().memories.live, "a forgotten object's memories are released");
        assertEquals(0, run.tracker().memories.doubleReleases);
    }

    @Test
    void memoryAndBookkeepingStayFlatOnALongStream() {
        BoxTracker tracker = new BoxTracker(0, 0);
        ScriptedDetector d = ScriptedDetector.moving(LOW, Map.of("red circle", new ScriptedDetector.Box(4, 4, 10, 10,
                0.9f), "square", new ScriptedDetector.Box(18, 18, 26, 26, 0.9f)), 0, 0);
        Run run = open(settings(), d, tracker);
        int frames = 100;
        long[] held = new long[frames];
        int[] live = new int[frames];
        // per object: 4 conditioning frames (re-conditioned every 16th) and 16 tracked, 11 of them with features
        long bound = 2 * (20L * 32 + 11L * 512);
        for (int t = 0; t < frames; t++) {
            VideoStep s = run.step(t, List.of(CIRCLE, SQUARE));
            assertEquals(List.of(0L, 1L), ids(s), "frame " + t);
            held[t] = run.stream().heldFloats();
            live[t] = tracker.memories.live;
            assertTrue(held[t] <= bound, "frame " + t + ": " + held[t]);
            // what a GPU bank would hold: per object its 4 conditioning memories and 7 tracked ones at most
            assertTrue(live[t] <= 2 * (4 + 7), "frame " + t + ": " + live[t] + " memories not released");
            assertTrue(run.stream().bookkeeping() <= 4, "bookkeeping " + run.stream().bookkeeping());
            if (t >= 80) {
                assertEquals(held[t - 16], held[t], "frame " + t + ": flat once the conditioning frames are 4");
                assertEquals(live[t - 16], live[t], "frame " + t + ": memories flat");
            }
        }
        assertEquals(2 * frames, tracker.memories.made, "a memory a frame per object");
        assertEquals(0, tracker.memories.doubleReleases + tracker.memories.lateReads);
        assertEquals(2 * (frames - 1), tracker.propagations, "every object propagated on every frame after its first");
    }

    @Test
    void conceptsHaveIdsUniqueOnTheStreamAndEndWithTheirConcept() {
        ScriptedDetector d = ScriptedDetector.moving(LOW, Map.of("red circle", new ScriptedDetector.Box(4, 4, 10, 10,
                0.9f), "square", new ScriptedDetector.Box(18, 18, 26, 26, 0.9f)), 0, 0);
        Run run = open(settings(), d, new BoxTracker(0, 0));
        VideoStep s = run.step(0, List.of(CIRCLE, SQUARE));
        assertEquals(List.of(0L, 1L), ids(s));
        assertEquals(List.of(CIRCLE, SQUARE), s.objects().stream().map(TrackedObject::concept).toList());
        VideoStep t = run.step(1, List.of(SQUARE));
        assertEquals(List.of(1L), ids(t));
        assertEquals(List.of(0L), t.dropped());
        assertEquals(List.of(1L, 2L), ids(run.step(2, List.of(SQUARE, CIRCLE))), "asked again: a new id");
    }

    @Test
    void aBadFrameIsRefusedBeforeTheStreamMovesOn() {
        Run run = open(settings(), ScriptedDetector.moving(LOW, Map.of(), 0, 0), new BoxTracker(0, 0));
        assertThrows(IllegalArgumentException.class, () -> run.stream().step(new float[5], W, H, List.of(CIRCLE)));
        assertThrows(IllegalArgumentException.class, () -> run.stream().step(input, 0, H, List.of(CIRCLE)));
        assertEquals(0, run.stream().nextFrame());
    }
}
