package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class HotstartTest {
    @Test
    void youngTrackUnmatchedOnEightFramesIsRemoved() {
        Hotstart h = new Hotstart(15, 8, 8);
        assertEquals(Set.of(), h.step(0, List.of(7L), List.of(), List.of()));
        for (int t = 1; t < 8; t++) {
            assertEquals(Set.of(), h.step(t, List.of(), List.of(7L), List.of()), "frame " + t);
        }
        assertEquals(Set.of(7L), h.step(8, List.of(), List.of(7L), List.of()));
    }

    @Test
    void trackPastTheDelayIsNeverRemovedAndItsCountsGo() {
        Hotstart h = new Hotstart(4, 2, 2);
        h.step(0, List.of(1L), List.of(), List.of());
        h.step(1, List.of(), List.of(1L), List.of());
        for (int t = 4; t < 40; t++) {
            assertEquals(Set.of(), h.step(t, List.of(), List.of(1L), List.of()), "frame " + t);
        }
        assertEquals(0, h.size(), "bounded: nothing kept for an object past the delay");
    }

    @Test
    void laterDuplicateOfAnEarlierTrackIsRemoved() {
        Hotstart h = new Hotstart(15, 8, 3);
        h.step(0, List.of(1L), List.of(), List.of());
        h.step(2, List.of(2L), List.of(), List.of());
        assertEquals(Set.of(), h.step(3, List.of(), List.of(), List.of(List.of(1L, 2L))));
        assertEquals(Set.of(), h.step(4, List.of(), List.of(), List.of(List.of(1L, 2L))));
        assertEquals(Set.of(2L), h.step(5, List.of(), List.of(), List.of(List.of(1L, 2L))));
    }

    @Test
    void delayZeroRemovesNothing() {
        Hotstart h = new Hotstart(0, 0, 0);
        h.step(0, List.of(1L), List.of(), List.of());
        for (int t = 1; t < 20; t++) {
            assertTrue(h.step(t, List.of(), List.of(1L), List.of(List.of(1L, 2L))).isEmpty());
        }
    }
}
