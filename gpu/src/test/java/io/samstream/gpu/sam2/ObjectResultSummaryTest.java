package io.samstream.gpu.sam2;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.mask.MaskSummary;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link ObjectResult#summary} (the fused {@link Resampling#bilinearSummary}) against the summary of the resized logits
 * it stands for: the same bits, area, box and stability counts, up- and downscaled, on odd sizes, on a mask touching
 * the edges, on a mask with a hole, and on an empty one.
 */
class ObjectResultSummaryTest {
    private static final int SIDE = 32;

    @Test
    void theSummaryIsThatOfTheResizedLogits() {
        Random random = new Random(7);
        int[][] sizes = {{1080, 1920}, {96, 128}, {17, 45}, {31, 7}, {1, 1}, {32, 32}, {2160, 3840}};
        for (int[] hw : sizes) {
            for (int kind = 0; kind < 4; kind++) {
                float[] low = logits(kind, random);
                ObjectResult r = new ObjectResult(1, low, SIDE, 1f, new float[4], false);
                MaskSummary expected = MaskSummary.of(r.logits(hw[0], hw[1]), hw[0], hw[1]);
                MaskSummary fused = r.summary(hw[0], hw[1]);
                String what = "kind " + kind + " at " + hw[0] + "x" + hw[1];
                assertEquals(expected.area(), fused.area(), what + ": area");
                assertArrayEquals(expected.box(), fused.box(), what + ": box");
                assertEquals(expected.stableCount(), fused.stableCount(), what + ": stable");
                assertEquals(expected.looseCount(), fused.looseCount(), what + ": loose");
                assertEquals(expected.rle().countsString(), fused.rle().countsString(), what + ": bits");
            }
        }
    }

    @Test
    void theKindsCoverFullPartAndEmptyMasks() {
        Random random = new Random(7);
        ObjectResult noise = new ObjectResult(1, logits(0, random), SIDE, 1f, new float[4], false);
        ObjectResult empty = new ObjectResult(1, logits(3, random), SIDE, 1f, new float[4], false);
        MaskSummary n = noise.summary(96, 128);
        assertTrue(n.area() > 0 && n.area() < 96 * 128, "noise sets some pixels: " + n.area());
        assertEquals(0, empty.summary(96, 128).area());
        assertArrayEquals(new int[4], empty.summary(96, 128).box());
    }

    /** 0: noise around 0; 1: a disc touching the top-left edge; 2: a ring (a hole); 3: empty (all -1024). */
    private static float[] logits(int kind, Random random) {
        float[] x = new float[SIDE * SIDE];
        for (int y = 0; y < SIDE; y++) {
            for (int i = 0; i < SIDE; i++) {
                double d = Math.hypot(y - 10, i - 12);
                x[y * SIDE + i] = switch (kind) {
                    case 0 -> (float) (random.nextGaussian() * 2);
                    case 1 -> (float) (9 - Math.hypot(y, i)) + (float) random.nextGaussian() * 0.1f;
                    case 2 -> (float) (4 - Math.abs(d - 8)) * 1.5f;
                    default -> -1024f;
                };
            }
        }
        return x;
    }
}
