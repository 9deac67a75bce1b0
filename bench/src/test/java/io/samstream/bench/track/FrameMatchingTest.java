package io.samstream.bench.track;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;

class FrameMatchingTest {
    /** 10x1 frame: object 0 on x 0..3, object 1 on x 5..8. */
    private static final byte[] LABELS = {0, 0, 0, 0, -1, 1, 1, 1, 1, -1};

    private static boolean[] span(int x0, int x1) {
        return Masks.rect(10, 1, x0, 0, x1, 1);
    }

    @Test
    void pairsFromIouOfOneHalfUp() {
        // id 7: x 0..3 = object 0 exactly. id 8: x 5..6 on object 1 (4 px): IoU 2/4 = 0.5, just enough.
        Map<Integer, Integer> m = FrameMatching.match(LABELS, 2, Map.of(7, span(0, 4), 8, span(5, 7)));
        assertEquals(Map.of(0, 7, 1, 8), m);
        // id 9: x 5..5: IoU 1/4 < 0.5: no match.
        assertEquals(Map.of(0, 7), FrameMatching.match(LABELS, 2, Map.of(7, span(0, 4), 9, span(5, 6))));
    }

    @Test
    void oneToOneTheBetterPredictionWins() {
        // Both overlap object 0: id 2 (x 0..4) with IoU 4/5, id 3 (x 1..3) with IoU 3/4: id 2 wins, id 3 is left over.
        Map<Integer, Integer> m = FrameMatching.match(LABELS, 2, Map.of(2, span(0, 5), 3, span(1, 4)));
        assertEquals(Map.of(0, 2), m);
        // One prediction over both objects (IoU 4/9 with each) matches neither.
        assertEquals(Map.of(), FrameMatching.match(LABELS, 2, Map.of(4, span(0, 9))));
    }

    @Test
    void anAbsentObjectOrAnEmptyMaskMatchesNothing() {
        byte[] onlyOne = {0, 0, -1, -1, -1, -1, -1, -1, -1, -1};
        assertEquals(Map.of(), FrameMatching.match(onlyOne, 2, Map.of(1, new boolean[10])));
        assertEquals(Map.of(0, 5), FrameMatching.match(onlyOne, 2, Map.of(5, span(0, 2), 6, new boolean[10])));
    }
}
