package io.samstream.gpu.cuda.sam3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The slot bookkeeping of {@link FeatureRing}, with the device's slots played by arrays. */
class FeatureRingTest {
    /** Slots as arrays: a map's "device" values, which the next acquirer overwrites. */
    private final float[][] slots = new float[3][];
    private final List<Integer> downloads = new ArrayList<>();
    private final FeatureRing ring = new FeatureRing("test level", 3, 2, this, i -> {
        downloads.add(i);
        return slots[i].clone();
    });

    /** Acquires a slot and "computes" {@code value} into it, as a part does. */
    private FeatureRing.Resident put(float value) {
        synchronized (this) {
            FeatureRing.Resident r = ring.acquire();
            slots[r.slot()] = new float[] {value, -value};
            return r;
        }
    }

    private boolean resident(FeatureRing.Resident r) {
        synchronized (this) {
            return r.resident();
        }
    }

    @Test
    void aMapIsReadFromItsSlotOnceAndKept() {
        FeatureRing.Resident a = put(1);
        assertTrue(resident(a));
        assertArrayEquals(new float[] {1, -1}, a.values());
        assertArrayEquals(new float[] {1, -1}, a.values());
        assertEquals(List.of(a.slot()), downloads, "brought back once");
        assertEquals(2, a.length());
    }

    @Test
    void aFullRingSpillsTheOldestBeforeReusingItsSlot() {
        FeatureRing.Resident a = put(1), b = put(2), c = put(3);
        assertEquals(3, ring.held());
        assertEquals(List.of(), downloads, "nothing brought back while slots are free");
        FeatureRing.Resident d = put(4);
        assertEquals(a.slot(), d.slot(), "the oldest map's slot is reused");
        assertFalse(resident(a));
        assertEquals(1, ring.spills());
        assertArrayEquals(new float[] {1, -1}, a.values(), "the spilled map keeps its own values");
        assertArrayEquals(new float[] {4, -4}, d.values());
        FeatureRing.Resident e = put(5);
        assertEquals(b.slot(), e.slot(), "then the next oldest");
        assertArrayEquals(new float[] {2, -2}, b.values());
        assertArrayEquals(new float[] {3, -3}, c.values());
        assertEquals(3, ring.held());
    }

    @Test
    void aReleasedMapFreesItsSlotWithoutACopy() {
        FeatureRing.Resident a = put(1), b = put(2), c = put(3);
        b.release();
        b.release(); // twice is once
        assertEquals(2, ring.held());
        FeatureRing.Resident d = put(4);
        assertEquals(b.slot(), d.slot(), "the released slot, not the oldest");
        assertEquals(List.of(), downloads, "a released map is not brought back");
        assertEquals(0, ring.spills());
        IllegalStateException gone = assertThrows(IllegalStateException.class, b::values);
        assertTrue(gone.getMessage().contains("test level"), gone.getMessage());
        assertArrayEquals(new float[] {1, -1}, a.values());
        assertArrayEquals(new float[] {3, -3}, c.values());
    }

    @Test
    void aMapReadBeforeItsReleaseKeepsItsValues() {
        FeatureRing.Resident a = put(1);
        float[] read = a.values();
        a.release();
        put(2);
        put(3);
        put(4);
        assertArrayEquals(read, a.values());
    }

    @Test
    void endlessFramesReleasedEachStepNeverSpillOrGrow() {
        for (int frame = 0; frame < 10_000; frame++) {
            FeatureRing.Resident level = put(frame), memory = put(-frame);
            assertNotEquals(level.slot(), memory.slot());
            level.release();
            memory.release();
        }
        assertEquals(0, ring.held());
        assertEquals(0, ring.spills());
        assertEquals(List.of(), downloads);
    }

    @Test
    void mapsAreTheirRingsOnly() {
        FeatureRing other = new FeatureRing("other", 1, 2, this, i -> new float[2]);
        FeatureRing.Resident a = put(1);
        assertTrue(a.of(ring));
        assertFalse(a.of(other));
        assertThrows(IllegalArgumentException.class, () -> new FeatureRing("none", 0, 2, this, i -> null));
    }
}
