package io.samstream.bench.track;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DiscoveryRecallTest {
    private static boolean[] visible(int frames, int from, int to) {
        boolean[] v = new boolean[frames];
        for (int t = from; t < to; t++) {
            v[t] = true;
        }
        return v;
    }

    @Test
    void onlyObjectsVisibleTenFramesInARowCountAndAMatchInsideTheRunFindsThem() {
        int frames = 30;
        boolean[][] v = {
            visible(frames, 0, 10), // object 0: exactly 10 frames: eligible, matched at frame 9
            visible(frames, 5, 14), // object 1: 9 frames: not eligible (matched, but that does not count)
            visible(frames, 12, 30), // object 2: eligible, matched only at frame 11, outside its run: not found
        };
        // object 3: two runs of 6 frames: not eligible
        boolean[] twoRuns = visible(frames, 0, 6);
        for (int t = 7; t < 13; t++) {
            twoRuns[t] = true;
        }
        boolean[][] all = {v[0], v[1], v[2], twoRuns};
        List<Map<Integer, Integer>> matches = new ArrayList<>();
        for (int t = 0; t < frames; t++) {
            Map<Integer, Integer> m = new HashMap<>();
            if (t == 9) {
                m.put(0, 100);
            }
            if (t == 6) {
                m.put(1, 101);
            }
            if (t == 11) {
                m.put(2, 102);
            }
            m.put(3, 103);
            matches.add(m);
        }
        DiscoveryRecall.Result r = DiscoveryRecall.of(all, matches);
        assertEquals(2, r.eligible());
        assertEquals(1, r.found());
        assertEquals(0.5, r.recall());
    }
}
