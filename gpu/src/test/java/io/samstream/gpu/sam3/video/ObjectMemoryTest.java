package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.sam3.FeatureMap;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An object's memory owns its features ({@link FeatureMap}, on a GPU a slot of its bank): every way one leaves it
 * releases it exactly once, one that moves (a promotion) stays held, and over an endless stream the memories held
 * are exactly those a later frame may read, a constant number.
 */
class ObjectMemoryTest {
    private static final float[] POINTER = new float[4];

    @Test
    void everyWayAMemoryLeavesReleasesItOnce() {
        CountedMemories c = new CountedMemories();
        ObjectMemory m = new ObjectMemory(2);
        m.addConditioning(0, c.of(new float[8]), POINTER);
        m.addConditioning(5, c.of(new float[8]), POINTER);
        m.addConditioning(9, c.of(new float[8]), POINTER);
        assertEquals(2, c.live, "the oldest conditioning frame beyond the limit is released");
        m.addConditioning(9, c.of(new float[8]), POINTER);
        assertEquals(2, c.live, "a conditioning frame replaced releases the old memory");

        FeatureMap first = c.of(new float[8]);
        m.addTracked(10, first, POINTER, 0.5f);
        FeatureMap second = c.of(new float[8]);
        m.addTracked(10, second, POINTER, 0.5f);
        assertEquals(3, c.live, "a tracked frame replaced releases the old memory");
        assertThrows(IllegalStateException.class, first::values);

        m.promote(10, null);
        assertNull(m.tracked(10));
        assertSame(second, m.conditioningFrames().get(1).features(), "the memory moves with its frame");
        assertEquals(2, c.live, "promoted: held, and frame 5 is beyond the limit now");
        second.values();   // not released

        m.addTracked(11, c.of(new float[8]), POINTER, 0.5f);
        m.dropFeatures(11);
        assertNull(m.tracked(11).features());
        assertNotNull(m.tracked(11).pointer, "the pointer stays");
        assertEquals(2, c.live);
        m.dropTracked(11);
        m.addTracked(12, c.of(new float[8]), POINTER, 0.5f);
        m.dropTracked(12);
        assertEquals(2, c.live);
        assertEquals(2, m.heldMemories());

        m.release();
        assertEquals(0, c.live, "the object is gone: all released");
        assertEquals(0, m.entries());
        m.release();
        assertEquals(0, c.doubleReleases, "each released once");
    }

    @Test
    void overALongStreamTheHeldMemoriesAreWhatLaterFramesReadAndStayFlat() {
        for (boolean selection : new boolean[] {true, false}) {
            CountedMemories c = new CountedMemories();
            MemoryPicker p = new MemoryPicker(selection, 7, 16, 0.01f);
            ObjectMemory m = new ObjectMemory(4);
            m.addConditioning(0, c.of(new float[] {0}), POINTER);
            int[] live = new int[2000];
            for (int t = 1; t < live.length; t++) {
                MemoryPicker.Picked picked = p.pick(m, t);
                for (Sam3TrackerModel.Spatial s : picked.spatial()) {
                    s.features().values();   // throws if it was released
                }
                m.addTracked(t, c.of(new float[] {t}), POINTER, t % 5 == 0 ? 0f : 0.5f);
                if (t % 37 == 0) {
                    m.promote(t, null);   // re-conditioned: the oldest conditioning frame goes
                }
                p.prune(m, t);
                live[t] = c.live;
                assertEquals(m.heldMemories(), c.live, "selection " + selection + ", frame " + t
                        + ": held = not released");
                assertTrue(c.live <= 4 + 7, "frame " + t + ": " + c.live);
                if (t > 1000) {
                    assertEquals(live[t - 37 * 5], live[t], "frame " + t + ": periodic, flat");
                }
            }
            List<Integer> conditioning = m.conditioningFrames().stream().map(e -> e.frame).toList();
            assertEquals(4, conditioning.size());
            m.release();
            assertEquals(0, c.live);
            assertEquals(0, c.doubleReleases + c.lateReads);
            assertTrue(c.made >= live.length);
        }
    }
}
