package io.samstream.gpu.sam2;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Hiera's block schedule as hieradet.Hiera builds it, at hiera_tiny's configuration. */
class HieraScheduleTest {
    @Test
    void hieraTinyBlocks() {
        Sam2Config.Layout layout = Sam2ConfigInference.RELEASES.get(0).layout();
        Sam2Config config = new Sam2Config(1024, 96, new int[] {1, 2, 7, 2}, 256, 64, 7, 4, 2048, 2048, 256, 4, 3, 2,
                7, layout);
        List<HieraSchedule.Block> blocks = HieraSchedule.blocks(config);
        assertEquals(12, blocks.size());
        // windows lag a block behind the stages (8, 4, 14, 7); blocks 5, 7 and 9 attend globally
        int[] windows = {8, 8, 4, 4, 14, 0, 14, 0, 14, 0, 14, 7};
        int[] dimsOut = {96, 192, 192, 384, 384, 384, 384, 384, 384, 384, 768, 768};
        int[] stages = {0, 1, 1, 2, 2, 2, 2, 2, 2, 2, 3, 3};
        for (HieraSchedule.Block b : blocks) {
            int i = b.index();
            assertEquals(windows[i], b.window(), "window of block " + i);
            assertEquals(dimsOut[i], b.dimOut(), "width of block " + i);
            assertEquals(stages[i], b.stage(), "stage of block " + i);
            assertEquals(i == 1 || i == 3 || i == 10, b.pool(), "pooling of block " + i);
            assertEquals(b.pool(), b.projects(), "projection of block " + i);
            assertEquals(96, b.headDim(), "head dim of block " + i);
        }
    }
}
