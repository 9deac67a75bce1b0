package io.samstream.bench.track;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FalseTracksTest {
    @Test
    void idsNeverMatchedInAnyFrameAreFalse() {
        List<Map<Integer, Integer>> matches = List.of(Map.of(0, 5), Map.of(1, 6), Map.of());
        assertEquals(Set.of(7, 9), FalseTracks.of(Set.of(5, 6, 7, 9), matches));
        assertEquals(Set.of(), FalseTracks.of(Set.of(5, 6), matches));
    }
}
