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
 * the edges, on a mask with a hole, on an empty one, and on logits at and around the thresholds (0 and +-1, a float
 * step either side, subnormals, huge values, NaN and infinities), where rows taken as a whole run must still come out
 * as blending each would.
 */
class ObjectResultSummaryTest {
    private static final int SIDE = 32;

    @Test
    void theSummaryIsThatOfTheResizedLogits() {
        Random random = new Random(7);
        int[][] sizes = {{1080, 1920}, {96, 128}, {17, 45}, {31, 7}, {1, 1}, {32, 32}, {2160, 3840}};
        for (int[] hw : sizes) {
            for (int kind = 0; kind < 8; kind++) {
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

    /** Values at and next to the summary's thresholds, and the odd ones a blend must not be trusted with. */
    private static final float[] EDGES = {0f, -0f, 1f, -1f, Math.nextUp(0f), Math.nextDown(0f), Math.nextUp(1f),
        Math.nextDown(1f), Math.nextUp(-1f), Math.nextDown(-1f), 1e-40f, -1e-40f, 1e30f, -1e30f, 3f, -3f};

    /**
     * 0: noise around 0; 1: a disc touching the top-left edge; 2: a ring (a hole); 3: empty (all -1024); 4: blocks of
     * 4 x 4 cells each holding one of {@link #EDGES} (equal neighbours right at a threshold); 5: cells drawn from
     * {@link #EDGES} one by one, with a NaN and infinities among them; 6: +5 but for a disc of -5 (whole columns
     * set); 7: pairs of columns of one value of {@link #EDGES} each (whole columns right at a threshold).
     */
    private static float[] logits(int kind, Random random) {
        float[] x = new float[SIDE * SIDE];
        if (kind == 6 || kind == 7) {
            for (int y = 0; y < SIDE; y++) {
                for (int i = 0; i < SIDE; i++) {
                    x[y * SIDE + i] = kind == 7 ? EDGES[(i / 2) % EDGES.length]
                            : Math.hypot(y - 16, i - 16) < 5 ? -5f : 5f;
                }
            }
            return x;
        }
        if (kind == 4) {
            for (int y = 0; y < SIDE; y++) {
                for (int i = 0; i < SIDE; i++) {
                    x[y * SIDE + i] = EDGES[((y / 4) * (SIDE / 4) + i / 4) % EDGES.length];
                }
            }
            return x;
        }
        if (kind == 5) {
            for (int k = 0; k < x.length; k++) {
                x[k] = EDGES[random.nextInt(EDGES.length)];
            }
            x[5] = Float.NaN;
            x[SIDE * 7 + 3] = Float.POSITIVE_INFINITY;
            x[SIDE * 20 + 30] = Float.NEGATIVE_INFINITY;
            return x;
        }
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
