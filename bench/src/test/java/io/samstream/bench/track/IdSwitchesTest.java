package io.samstream.bench.track;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class IdSwitchesTest {
    @Test
    void countsChangesBetweenMatchedFramesPerObject() {
        List<Map<Integer, Integer>> matches = List.of(
                Map.of(0, 10, 1, 11),
                Map.of(0, 10, 1, 11),
                Map.of(1, 11), // object 0 unmatched (hidden): no switch by itself
                Map.of(0, 10, 1, 12), // object 0 back under its id; object 1 switches to 12
                Map.of(0, 13, 1, 11), // object 0 switches, object 1 switches back
                Map.of());
        assertEquals(3, IdSwitches.count(matches));
    }

    @Test
    void nothingMatchedOrOneStableIdIsNoSwitch() {
        assertEquals(0, IdSwitches.count(List.of(Map.of(), Map.of())));
        assertEquals(0, IdSwitches.count(List.of(Map.of(2, 5), Map.of(), Map.of(2, 5))));
    }
}
