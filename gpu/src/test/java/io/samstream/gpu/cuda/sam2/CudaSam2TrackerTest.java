package io.samstream.gpu.cuda.sam2;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Shapes;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the GPU tracker refuses and reserves, told before any GPU work (no GPU needed). */
class CudaSam2TrackerTest {
    @Test
    void limitsBelowOneAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new CudaSam2Tracker.Limits(1, 0, 4));
        assertTrue(e.getMessage().contains("0 objects per pass"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new CudaSam2Tracker.Limits(0, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new CudaSam2Tracker.Limits(1, 1, 0));
    }

    @Test
    void anUnsupportedShapeIsNamedBeforeAnyGpuWork() {
        Sam2Config tiny = Sam2Shapes.release("hiera_tiny");
        Sam2Config.Layout threeHeads = new Sam2Config.Layout("three heads", 1, new int[] {5, 7, 9},
                new int[] {8, 4, 14, 7}, 1024, 3);
        Sam2Config odd = new Sam2Config(1024, 96, tiny.stages(), 256, 60, 7, 4, 2048, 2048, 256, 4, 3, 2, 7, threeHeads);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CudaSam2Tracker.open(
                new StateDict(null, Map.of()), odd, 0, new CudaSam2Tracker.Limits(1, 1, 1)));
        assertTrue(e.getMessage().contains("the CUDA SAM 2.1 tracker cannot run"), e.getMessage());
        assertTrue(e.getMessage().contains("memory attention head dim 256/3"), e.getMessage());
        assertTrue(e.getMessage().contains("memory width 60"), e.getMessage());
    }

    @Test
    void theReservationGrowsWithTheLimits() {
        Sam2Config config = Sam2Shapes.release("hiera_tiny");
        long one = CudaSam2Tracker.poolBytes(config, new CudaSam2Tracker.Limits(1, 1, 1));
        long frames = CudaSam2Tracker.poolBytes(config, new CudaSam2Tracker.Limits(8, 1, 1));
        long objects = CudaSam2Tracker.poolBytes(config, new CudaSam2Tracker.Limits(1, 16, 1));
        long banks = CudaSam2Tracker.poolBytes(config, new CudaSam2Tracker.Limits(1, 1, 256));
        assertTrue(frames > one && objects > one && banks > one, one + " " + frames + " " + objects + " " + banks);
        // each bank: the conditioning memory + 6 recent ones (64 x 64 x 64 bf16) and 16 pointers (256 bf16)
        long bank = (7L * 4096 * 64 + 16 * 256) * 2;
        assertTrue(banks - one >= 255 * bank, (banks - one) + " for 255 more banks of " + bank);
    }

    @Test
    void thePassesInFlightFitTheirPinnedBudget() {
        long budget = 128L << 20;
        // one object's pass (inputs ~80 KB, a 256 x 256 fp32 mask and a pointer): the cap of eight
        assertEquals(8, PassRing.slots(80_000, 262_664, budget));
        // 64 objects a pass: as many as fit, within the budget
        int k = PassRing.slots(5L << 20, 64L * 262_664, budget);
        assertTrue(k >= 2 && k < 8 && PassRing.bytes(k, 5L << 20, 64L * 262_664) <= budget, "slots " + k);
        // a pass larger than the budget still gets two slots: the host stages one while the GPU runs the other
        assertEquals(2, PassRing.slots(1 << 20, 200L << 20, budget));
    }
}
