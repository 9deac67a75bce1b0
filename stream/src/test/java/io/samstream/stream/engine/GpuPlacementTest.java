package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class GpuPlacementTest {
    @Test
    void theFewestStreamsThenTheFewestFramesInFlightThenTheLowestIndex() {
        long[] frames = {0, 0, 0};
        GpuPlacement p = new GpuPlacement(3, g -> frames[g]);
        assertEquals(0, p.place("a"));
        assertEquals(1, p.place("b"));
        frames[0] = 9;
        frames[1] = 2;
        assertEquals(2, p.place("c"), "no stream there, whatever the frames");
        frames[2] = 5;
        assertEquals(1, p.place("d"), "all have one stream: the fewest frames in flight");
        assertEquals(2, p.place("e"), "GPUs 0 and 2 have one stream, 2 fewer frames");
        assertEquals(0, p.place("f"));
        assertEquals(2, p.streams(0));
        assertEquals(2, p.streams(1));
        assertEquals(2, p.streams(2));
    }

    @Test
    void aStreamKeepsItsGpuWhileAnyRunOfItIsInTheEngine() {
        GpuPlacement p = new GpuPlacement(2, g -> 0);
        assertEquals(0, p.place("a"));
        assertEquals(1, p.place("b"));
        p.release("b");
        assertEquals(0, p.streams(1));
        assertEquals(0, p.place("a"), "redefined while its old run still publishes: the same GPU, not the emptier one");
        assertEquals(1, p.streams(0), "one stream, two runs");
        p.release("a");
        assertEquals(1, p.streams(0), "its new run still counts");
        p.release("a");
        assertEquals(0, p.streams(0));
        assertThrows(IllegalStateException.class, () -> p.release("a"));
        assertEquals(0, p.place("a"), "gone: placed afresh (lowest index on a tie)");
    }

    @Test
    void oneGpuTakesEveryStream() {
        GpuPlacement p = new GpuPlacement(1, g -> {
            throw new AssertionError("no choice to make");
        });
        assertEquals(0, p.place("a"));
        assertEquals(0, p.place("b"));
        assertThrows(IllegalArgumentException.class, () -> new GpuPlacement(0, g -> 0));
    }
}
