package io.samstream.gpu.cuda;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.sam2.ObjectPrompt;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Shapes;
import java.util.List;
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
    void promptsTheDecoderCannotTakeAreRefusedByName() {
        CudaSam2Tracker.checkPrompts(List.of(ObjectPrompt.box(1, 10, 10, 50, 50), ObjectPrompt.point(2, 5, 5, true)));
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class, () -> CudaSam2Tracker
                .checkPrompts(List.of(ObjectPrompt.point(3, 5, 5, true), ObjectPrompt.point(3, 6, 6, false))));
        assertTrue(twice.getMessage().contains("two prompts for object 3"), twice.getMessage());
        float[][] many = new float[CudaSam2MaskDecoder.MAX_SPARSE][];
        int[] labels = new int[many.length];
        for (int i = 0; i < many.length; i++) {
            many[i] = new float[] {i, i};
            labels[i] = 1;
        }
        IllegalArgumentException tooMany = assertThrows(IllegalArgumentException.class,
                () -> CudaSam2Tracker.checkPrompts(List.of(new ObjectPrompt(4, null, many, labels))));
        assertTrue(tooMany.getMessage().startsWith("object 4: " + many.length + " points"), tooMany.getMessage());
        IllegalArgumentException nan = assertThrows(IllegalArgumentException.class,
                () -> CudaSam2Tracker.checkPrompts(List.of(ObjectPrompt.box(5, Float.NaN, 0, 10, 10))));
        assertTrue(nan.getMessage().contains("object 5: a point that is not a finite number"), nan.getMessage());
    }
}
