package io.samstream.gpu.sam2;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class MemoryBankTest {
    private static MemoryBank.Entry entry(int frame) {
        return new MemoryBank.Entry(frame, new float[10], new float[4]);
    }

    @Test
    void keepsWhatTheNextFrameReadsAndNothingOlder() {
        MemoryBank bank = new MemoryBank(7, 16);
        bank.addConditioning(entry(0));
        long held = -1;
        for (int t = 1; t <= 1000; t++) {
            bank.addTracked(entry(t));
            if (t >= 20) {
                if (held < 0) {
                    held = bank.heldFloats();
                }
                assertEquals(held, bank.heldFloats(), "frame " + t);
            }
        }
        // frame 1001 reads features of 995..1000 and pointers of 986..1000
        for (int f = 995; f <= 1000; f++) {
            assertNotNull(bank.tracked(f).features(), "features of " + f);
        }
        assertNull(bank.tracked(994).features());
        assertNotNull(bank.tracked(986));
        assertNull(bank.tracked(985));
        assertEquals(15, bank.trackedCount());
        assertEquals(1 * 14 + 15 * 4 + 6 * 10, bank.heldFloats());
        assertEquals(0, bank.conditioningFrames().get(0).frame());
    }

    @Test
    void conditioningFramesAreCappedOldestFirst() {
        MemoryBank bank = new MemoryBank(7, 3);
        for (int t = 0; t < 5; t++) {
            bank.addConditioning(entry(10 * t));
        }
        assertEquals(3, bank.conditioningFrames().size());
        assertEquals(20, bank.conditioningFrames().get(0).frame());
        assertEquals(40, bank.conditioningFrames().get(2).frame());
        assertThrows(IllegalStateException.class, () -> bank.addTracked(entry(40)));
        assertThrows(IllegalArgumentException.class, () -> new MemoryBank(0, 3));
    }
}
