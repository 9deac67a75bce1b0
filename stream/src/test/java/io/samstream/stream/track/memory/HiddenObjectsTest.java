package io.samstream.stream.track.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.samstream.stream.track.memory.HiddenObjects.Verdict;
import org.junit.jupiter.api.Test;

/** Memory mode's hidden / lost bookkeeping, driven by given visibility (object score > 0) per frame. */
class HiddenObjectsTest {
    @Test
    void anObjectIsHiddenUntilItsLimitThenLostOnce() {
        HiddenObjects h = new HiddenObjects(3);
        assertEquals(Verdict.VISIBLE, h.observe(1, true));
        assertEquals(Verdict.HIDDEN, h.observe(1, false));
        assertEquals(Verdict.HIDDEN, h.observe(1, false));
        assertEquals(2, h.hiddenFor(1));
        assertEquals(Verdict.LOST, h.observe(1, false), "the third hidden frame in a row");
        assertEquals(0, h.hiddenFor(1), "forgotten once lost");
        assertEquals(Verdict.HIDDEN, h.observe(1, false), "re-prompted, it counts from zero");
    }

    @Test
    void aVisibleFrameClearsTheCountAndObjectsCountApart() {
        HiddenObjects h = new HiddenObjects(2);
        assertEquals(Verdict.HIDDEN, h.observe(1, false));
        assertEquals(Verdict.HIDDEN, h.observe(2, false));
        assertEquals(Verdict.VISIBLE, h.observe(1, true));
        assertEquals(Verdict.HIDDEN, h.observe(1, false), "the run starts over after a visible frame");
        assertEquals(Verdict.LOST, h.observe(2, false), "object 2's run was not broken");
        h.forget(1);
        assertEquals(Verdict.HIDDEN, h.observe(1, false));
        h.clear();
        assertEquals(0, h.hiddenFor(1));
    }

    @Test
    void aLimitOfOneLosesOnTheFirstHiddenFrame() {
        assertEquals(Verdict.LOST, new HiddenObjects(1).observe(5, false));
        assertThrows(IllegalArgumentException.class, () -> new HiddenObjects(0));
    }
}
