package io.samstream.gpu.cuda.sam3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The device bank's bookkeeping ({@link MemorySlots}) without a device: slots taken for holders and given back once by
 * them alone, a full bank saying so (the tracker then keeps the memory on the host), holders lost without a give
 * reclaimed after the garbage collector finds them, and a bank used forever staying within its slots.
 */
class MemorySlotsTest {
    /** A holder that knows its slot, as {@link DeviceMemory} does. */
    record Held(int slot) {}

    @Test
    void slotsAreTakenOnceAndGivenBackOnceByTheirHolder() {
        MemorySlots slots = new MemorySlots(3);
        Held a = slots.take(Held::new), b = slots.take(Held::new), c = slots.take(Held::new);
        assertEquals(Set.of(0, 1, 2), Set.of(a.slot(), b.slot(), c.slot()), "distinct slots");
        assertEquals(3, slots.taken());
        assertNull(slots.take(Held::new), "full");
        assertEquals(1, slots.refused());
        assertTrue(slots.holds(b.slot(), b));
        assertFalse(slots.holds(b.slot(), a), "only its holder holds a slot");
        assertFalse(slots.give(b.slot(), a), "nor gives it back");

        assertTrue(slots.give(b.slot(), b));
        assertFalse(slots.holds(b.slot(), b));
        Held d = slots.take(Held::new);
        assertEquals(b.slot(), d.slot(), "the slot given back is taken again");
        assertFalse(slots.give(b.slot(), b), "a second give by the old holder does nothing");
        assertTrue(slots.holds(d.slot(), d), "and leaves the new holder's slot alone");
        assertEquals(3, slots.taken());

        slots.close();
        assertFalse(slots.holds(d.slot(), d));
        assertFalse(slots.give(a.slot(), a));
        assertNull(slots.take(Held::new), "closed: nothing taken");
        assertEquals(0, slots.taken());
    }

    @Test
    void aBankOfNoSlotsRefusesEveryTake() {
        MemorySlots slots = new MemorySlots(0);
        assertNull(slots.take(Held::new));
        assertEquals(0, slots.capacity());
    }

    @Test
    void aHolderLostWithoutGivingBackIsReclaimedOnceCollected() throws InterruptedException {
        MemorySlots slots = new MemorySlots(1);
        assertNotNull(slots.take(Held::new));   // dropped at once, never given back
        Held again = null;
        for (int i = 0; i < 200 && again == null; i++) {
            System.gc();
            Thread.sleep(5);
            again = slots.take(Held::new);
        }
        assertNotNull(again, "the collected holder's slot comes back");
        assertEquals(1, slots.reclaimed());
        assertTrue(slots.give(again.slot(), again), "the new holder holds it, not the dead one");
        assertEquals(0, slots.taken());
    }

    @Test
    void aBankUsedForeverStaysWithinItsSlots() {
        // objects keep a window of memories, take one a frame and give the oldest back, as a stream's do
        MemorySlots slots = new MemorySlots(24);
        Deque<Held> window = new ArrayDeque<>();
        Set<Integer> seen = new HashSet<>();
        int refused = 0;
        for (int frame = 0; frame < 100_000; frame++) {
            Held h = slots.take(Held::new);
            if (h == null) {
                refused++;
            } else {
                window.addLast(h);
                seen.add(h.slot());
            }
            if (window.size() > 20) {
                Held old = window.removeFirst();
                assertTrue(slots.give(old.slot(), old));
            }
            assertEquals(window.size(), slots.taken(), "frame " + frame);
        }
        assertEquals(0, refused, "20 held of 24: never full");
        assertTrue(seen.size() <= 24);
    }
}
