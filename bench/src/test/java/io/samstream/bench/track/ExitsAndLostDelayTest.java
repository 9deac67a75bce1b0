package io.samstream.bench.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Exits from a hand-made ground truth, the lost delays measured against them, zero-area and false-track frames. */
class ExitsAndLostDelayTest {
    private static final int W = 10;
    private static final int H = 4;
    private static final int FRAMES = 20;

    /** How an object is in a frame. */
    private enum State { SEEN, OUT, COVERED, GONE }

    /**
     * A 10x4 clip of 20 frames: object o, when seen, owns pixel column o (a 1x4 strip); covered, it is inside
     * the frame but shows no pixel; out, nothing of it is inside; gone, it does not exist.
     */
    private static ClipTruth truth(State[][] states) {
        int n = states.length;
        byte[][] labels = new byte[FRAMES][];
        int[][] full = new int[FRAMES][n];
        int[][] in = new int[FRAMES][n];
        boolean[][] exists = new boolean[FRAMES][n];
        for (int t = 0; t < FRAMES; t++) {
            byte[] l = new byte[W * H];
            java.util.Arrays.fill(l, ClipTruth.BACKGROUND);
            for (int o = 0; o < n; o++) {
                State s = states[o][t];
                exists[t][o] = s != State.GONE;
                full[t][o] = s == State.GONE ? 0 : H;
                in[t][o] = s == State.SEEN || s == State.COVERED ? H : 0;
                if (s == State.SEEN) {
                    boolean[] strip = Masks.rect(W, H, o, 0, o + 1, H);
                    for (int p = 0; p < strip.length; p++) {
                        if (strip[p]) {
                            l[p] = (byte) o;
                        }
                    }
                }
            }
            labels[t] = l;
        }
        return new ClipTruth(W, H, n, labels, full, in, exists);
    }

    /** {@code SEEN} before {@code from}, {@code s} in [from, to), {@code SEEN} from {@code to}. */
    private static State[] seenExcept(State s, int from, int to) {
        State[] out = new State[FRAMES];
        for (int t = 0; t < FRAMES; t++) {
            out[t] = t >= from && t < to ? s : State.SEEN;
        }
        return out;
    }

    private static ClipTruth fiveObjects() {
        return truth(new State[][] {
                seenExcept(State.OUT, 5, FRAMES), // 0: leaves at 5 for good
                seenExcept(State.COVERED, 10, 13), // 1: hidden 3 frames: an occlusion, no exit
                seenExcept(State.COVERED, 10, FRAMES), // 2: covered from 10 to the end: taken over
                seenExcept(State.GONE, 12, FRAMES), // 3: ended by a cut at 12
                seenExcept(State.OUT, 5, 8), // 4: dips out 3 frames: too short
                seenExcept(State.OUT, 3, 13), // 5: out 10 frames, back at 13
        });
    }

    private static List<List<Integer>> lost(Map<Integer, Integer> frameOfId) {
        List<List<Integer>> out = new ArrayList<>();
        for (int t = 0; t < FRAMES; t++) {
            List<Integer> l = new ArrayList<>();
            for (Map.Entry<Integer, Integer> e : frameOfId.entrySet()) {
                if (e.getValue() == t) {
                    l.add(e.getKey());
                }
            }
            out.add(l);
        }
        return out;
    }

    @Test
    void exitsAreLeavingCutsAndCoverToTheEndLongEnough() {
        List<Exits.Exit> exits = Exits.of(fiveObjects());
        assertEquals(List.of(
                new Exits.Exit(0, 5, Exits.Cause.LEFT, -1),
                new Exits.Exit(2, 10, Exits.Cause.COVERED, -1),
                new Exits.Exit(3, 12, Exits.Cause.CUT, -1),
                new Exits.Exit(5, 3, Exits.Cause.LEFT, 13)), exits);
        // Object 5 comes back at 13, whole: prompted again there; the others are not.
        assertEquals(Map.of(5, List.of(13)), Exits.reprompts(fiveObjects()));
    }

    @Test
    void anExitTooCloseToTheClipsEndIsNoneYet() {
        // Leaves at 13: 7 frames left (< 8) and it never comes back.
        ClipTruth t = truth(new State[][] {seenExcept(State.OUT, 13, FRAMES)});
        assertEquals(List.of(), Exits.of(t));
        ClipTruth t2 = truth(new State[][] {seenExcept(State.OUT, 12, FRAMES)});
        assertEquals(1, Exits.of(t2).size());
    }

    @Test
    void theDefaultClipsArePromptedOnceAsBefore() {
        // The re-prompt rule must not change the default benchmark: their objects never come back.
        for (SyntheticClip c : TrackClips.all().values()) {
            assertEquals(Map.of(), Exits.reprompts(c.truth()), c.name());
        }
        // enter-leave's two leavers are exits (left, for good).
        List<Exits.Exit> exits = Exits.of(TrackClips.enterLeave().truth());
        assertEquals(List.of(new Exits.Exit(1, 34, Exits.Cause.LEFT, -1), new Exits.Exit(3, 40, Exits.Cause.LEFT, -1)),
                exits);
    }

    @Test
    void lostDelayCountsFramesFromTheExitToTheLostRecord() {
        List<Exits.Exit> exits = Exits.of(fiveObjects());
        Map<Integer, List<Integer>> prompts = Map.of(0, List.of(0), 2, List.of(0), 3, List.of(0), 5, List.of(0, 13));
        // 0: lost 4 frames after leaving; 2: never; 3: at the cut itself; 5: lost at 2, before it left (early).
        LostDelay.Result r = LostDelay.of(exits, prompts, lost(Map.of(0, 9, 3, 12, 5, 2)));
        assertEquals(4, r.exits());
        assertEquals(1, r.neverReported());
        assertEquals(1, r.early());
        assertEquals(4, r.maxDelay().getAsInt());
        assertEquals((4 + 0 + 0) / 3.0, r.meanDelay().getAsDouble(), 1e-12);
        assertEquals(3, r.reportedWithin(7));
        assertEquals(2, r.reportedWithin(3));
        Map<Integer, Integer> delays = new HashMap<>();
        r.events().stream().filter(LostDelay.Event::reported).forEach(e -> delays.put(e.exit().object(), e.delay()));
        assertEquals(Map.of(0, 4, 3, 0, 5, 0), delays);
    }

    @Test
    void aLostAfterTheNextPromptOrForAnUnpromptedObjectDoesNotCount() {
        List<Exits.Exit> exits = Exits.of(fiveObjects());
        // Object 5 is prompted again at 13; a lost at 15 belongs to that new track, not to the exit at 3.
        LostDelay.Result r = LostDelay.of(exits, Map.of(5, List.of(0, 13)), lost(Map.of(5, 15)));
        assertEquals(1, r.exits());
        assertEquals(1, r.neverReported());
        assertTrue(r.meanDelay().isEmpty());
        // Object 3 prompted only at the cut (frame 12) or never: its exit is not counted.
        assertEquals(0, LostDelay.of(exits, Map.of(3, List.of(12)), lost(Map.of())).exits());
        assertEquals(0, LostDelay.of(exits, Map.of(), lost(Map.of(0, 6))).exits());
    }

    @Test
    void falseTrackFramesAreUnmatchedNonEmptyMasksAndZeroAreaEntriesAreCounted() {
        ClipTruth truth = fiveObjects();
        List<Map<Integer, boolean[]>> predictions = new ArrayList<>();
        List<Set<Integer>> zero = new ArrayList<>();
        for (int t = 0; t < FRAMES; t++) {
            Map<Integer, boolean[]> m = new HashMap<>();
            // Object 0's track: right while it is seen; after it left, a blob on the background column 9.
            m.put(0, t < 5 ? truth.mask(0, t) : Masks.rect(W, H, 9, 0, 10, H));
            // Object 3's track: published with an empty mask (area 0) from the cut on, never lost.
            m.put(3, t < 12 ? truth.mask(3, t) : new boolean[W * H]);
            predictions.add(m);
            zero.add(t < 12 ? Set.of() : Set.of(3));
        }
        List<Map<Integer, Integer>> matches = new ArrayList<>();
        for (int t = 0; t < FRAMES; t++) {
            matches.add(FrameMatching.match(truth.labels(t), truth.objects(), predictions.get(t)));
        }
        FalseTracks.Frames f = FalseTracks.frames(predictions, matches);
        assertEquals(20 + 12, f.trackFrames(), "object 0 every frame, object 3 until the cut (empty masks do not count)");
        assertEquals(15, f.falseFrames());
        assertEquals(Map.of(0, 15), f.falseFramesById());
        assertEquals(15.0 / 32, f.share(), 1e-12);

        TrackHarness.ClipRun run = new TrackHarness.ClipRun(null, TrackHarness.Mode.BOX, predictions, Map.of(0, 0, 3, 0),
                Map.of(), lost(Map.of(0, 10)), zero, 1.0);
        TrackHealth h = TrackHealth.of(truth, run);
        assertEquals(8, h.zeroAreaEntries());
        assertEquals(8, h.zeroAreaRecords());
        assertEquals(15, h.falseFrames().falseFrames());
        assertEquals(2, h.lost().exits(), "object 0 left, object 3 cut");
        assertEquals(1, h.lost().neverReported(), "object 3");
        assertEquals(5, h.lost().maxDelay().getAsInt(), "object 0: left at 5, lost at 10");
        assertFalse(h.lost().events().get(0).early());

        // Both tracks are published to the end (object 3 with empty masks): no silent end.
        assertEquals(List.of(), h.silentEnds());

        TrackHealth both = TrackHealth.merge(List.of(h, h));
        assertEquals(16, both.zeroAreaEntries());
        assertEquals(4, both.lost().exits());
        assertEquals(30, both.falseFrames().falseFrames());
    }

    @Test
    void aTrackThatStopsBeingPublishedWithoutLostEndedSilently() {
        ClipTruth truth = fiveObjects();
        List<Set<Integer>> published = new ArrayList<>();
        for (int t = 0; t < FRAMES; t++) {
            Set<Integer> ids = new java.util.HashSet<>();
            if (t < 7) {
                ids.add(1); // object 1 (seen at 7) no longer published from 7: merged away, never lost
            }
            if (t < 9) {
                ids.add(0); // object 0 (left at 5) last published at 8, lost at 9: not silent
            }
            ids.add(4); // object 4 published to the end
            if (t < 6 || t >= 13) {
                ids.add(5); // object 5: first segment ends at 6 silently (out of the frame), prompted again at 13
            }
            published.add(ids);
        }
        Map<Integer, List<Integer>> prompts = Map.of(0, List.of(0), 1, List.of(0), 4, List.of(0), 5, List.of(0, 13));
        List<TrackHealth.SilentEnd> silent = TrackHealth.silentEnds(truth, prompts, published, lost(Map.of(0, 9)));
        assertEquals(List.of(new TrackHealth.SilentEnd(1, 7, true), new TrackHealth.SilentEnd(5, 6, false)), silent);
        // Object 2 prompted at 3 and never published: its track ended silently on its prompt frame.
        Map<Integer, List<Integer>> withTwo = new HashMap<>(prompts);
        withTwo.put(2, List.of(3));
        assertEquals(List.of(new TrackHealth.SilentEnd(1, 7, true), new TrackHealth.SilentEnd(2, 3, true),
                new TrackHealth.SilentEnd(5, 6, false)), TrackHealth.silentEnds(truth, withTwo, published, lost(Map.of(0, 9))));
        // Lost in the segment (even late) is not silent.
        assertEquals(List.of(new TrackHealth.SilentEnd(5, 6, false)),
                TrackHealth.silentEnds(truth, prompts, published, lost(Map.of(0, 9, 1, 15))));
    }
}
