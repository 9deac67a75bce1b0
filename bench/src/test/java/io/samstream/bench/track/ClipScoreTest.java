package io.samstream.bench.track;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class ClipScoreTest {
    /** The ground truth itself as predictions, id = object index (absent objects: no mask at all). */
    private static List<Map<Integer, boolean[]>> perfect(ClipTruth truth) {
        List<Map<Integer, boolean[]>> out = new ArrayList<>();
        for (int t = 0; t < truth.frames(); t++) {
            Map<Integer, boolean[]> m = new HashMap<>();
            for (int o = 0; o < truth.objects(); o++) {
                if (truth.visibleArea(o, t) > 0) {
                    m.put(o, truth.mask(o, t));
                }
            }
            out.add(m);
        }
        return out;
    }

    private static Map<Integer, Integer> promptFrames(ClipTruth truth) {
        Map<Integer, Integer> p = new TreeMap<>();
        for (int o = 0; o < truth.objects(); o++) {
            p.put(o, truth.firstFullyVisible(o));
        }
        return p;
    }

    @Test
    void theTruthScoresOneEverywhere() {
        ClipTruth truth = TrackClips.enterLeave().truth();
        ClipScore.Result r = ClipScore.score("enter-leave", truth, perfect(truth), promptFrames(truth));
        assertEquals(4, r.objects().size());
        assertEquals(1.0, r.j());
        assertEquals(1.0, r.f());
        assertEquals(0, r.idSwitches());
        assertEquals(new DiscoveryRecall.Result(4, 4), r.recall());
        assertEquals(Set.of(), r.falseTracks());
        assertEquals(14, r.objects().get(0).fromFrame());
    }

    @Test
    void swappedIdsCostSwitchesAndTheirFramesJAndF() {
        ClipTruth truth = TrackClips.constantMotion().truth();
        List<Map<Integer, boolean[]>> predictions = perfect(truth);
        // From frame 30 on, objects 0 and 1 come under each other's id; a patch of background is id 99.
        for (int t = 30; t < truth.frames(); t++) {
            Map<Integer, boolean[]> m = predictions.get(t);
            boolean[] zero = m.get(0);
            m.put(0, m.get(1));
            m.put(1, zero);
            m.put(99, Masks.rect(truth.width(), truth.height(), 150, 5, 160, 15));
        }
        ClipScore.Result r = ClipScore.score("constant-motion", truth, predictions, promptFrames(truth));
        assertEquals(2, r.idSwitches());
        assertEquals(Set.of(99), r.falseTracks());
        assertEquals(5, r.predicted());
        // Objects 0 and 1: right in frames 0-29, wrong (J 0; F 0, the two lie far apart) in 30-47.
        assertEquals(30.0 / 48, r.objects().get(0).j(), 1e-12);
        assertEquals(30.0 / 48, r.objects().get(1).f(), 1e-12);
        assertEquals(1.0, r.objects().get(2).j());
        assertEquals((2 * 30.0 / 48 + 2) / 4, r.j(), 1e-12);
        assertEquals((r.j() + r.f()) / 2, r.jf(), 1e-12);
    }

    @Test
    void aMissingObjectCountsAsAnEmptyPredictionAndTheBaselineFramesStartAtThePrompt() {
        ClipTruth truth = TrackClips.enterLeave().truth();
        List<Map<Integer, boolean[]>> predictions = perfect(truth);
        // Object 1 (the box leaving on the right, gone from frame 34) is never predicted after frame 9.
        for (int t = 10; t < truth.frames(); t++) {
            predictions.get(t).remove(1);
        }
        ClipScore.Result r = ClipScore.score("enter-leave", truth, predictions, Map.of(1, 0));
        // Frames 0-9 right; 10-33 missed (J 0); 34-47 absent and not predicted (J 1).
        assertEquals((10.0 + 14) / 48, r.objects().get(0).j(), 1e-12);
        assertEquals(0, r.idSwitches());
    }
}
