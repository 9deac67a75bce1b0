package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.sam2.Resampling;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The fused, parallel memory-mask inputs of a tracked frame against the steps one after the other (upsample, the
 * shrinkage rule, sigmoid x 20 - 10), bit for bit.
 */
class MemoryMasksTrackedTest {
    static final int LOW = 24;
    static final int SIDE = 96;

    @Test
    void fusedInputsAreTheStepsOneAfterTheOther() {
        Random r = new Random(2);
        try (CpuThreadPool pool = new CpuThreadPool(3)) {
            for (int n = 1; n <= 5; n++) {
                for (int trial = 0; trial < 4; trial++) {
                    float[][] low = new float[n][];
                    boolean[] wanted = new boolean[n];
                    for (int k = 0; k < n; k++) {
                        low[k] = blob(r);
                        wanted[k] = r.nextFloat() < 0.8f;
                    }
                    check(pool, low, wanted);
                }
            }
        }
    }

    @Test
    void aMaskMostlyUnderAStrongerOneIsSuppressedAndAbsent() {
        float[] big = Masks.logits(LOW, 0, 0, 16, 16, 25f);
        float[] small = Masks.logits(LOW, 2, 2, 17, 17, 5f);
        try (CpuThreadPool pool = new CpuThreadPool(2)) {
            MemoryMasks.Tracked t = check(pool, new float[][] {big, small, Masks.logits(LOW, 0, 0, 0, 0, 3f)},
                    new boolean[] {true, true, true});
            assertArrayEquals(new boolean[] {true, false, false}, t.present());
        }
    }

    @Test
    void scaledIsTheFloatSigmoidAroundAndBeyondSaturation() {
        float[] edges = {18f, -18f, 17.5f, -17.5f, 1e30f, -1e30f, 0f, -0f, 3.25f, Float.POSITIVE_INFINITY,
            Float.NEGATIVE_INFINITY, Float.NaN, Float.MAX_VALUE, -Float.MAX_VALUE, Float.MIN_VALUE};
        for (float v : edges) {
            for (float x : new float[] {v, Math.nextUp(v), Math.nextDown(v)}) {
                assertSameFloat(reference(x), MemoryMasks.scaled(x), x);
            }
        }
        Random r = new Random(9);
        for (int i = 0; i < 200_000; i++) {
            float x = (r.nextFloat() - 0.5f) * 80f;
            assertSameFloat(reference(x), MemoryMasks.scaled(x), x);
        }
    }

    private static MemoryMasks.Tracked check(CpuThreadPool pool, float[][] low, boolean[] wanted) {
        int n = low.length;
        float[][] high = new float[n][];
        for (int k = 0; k < n; k++) {
            high[k] = Resampling.bilinear(low[k], LOW, LOW, SIDE, SIDE);
        }
        float[][] suppressed = MaskOverlaps.suppressShrunk(high);
        MemoryMasks.Tracked got = MemoryMasks.fromTracked(pool, low, LOW, SIDE, wanted);
        for (int k = 0; k < n; k++) {
            if (!wanted[k]) {
                assertNull(got.scaled()[k]);
                continue;
            }
            float[] expected = new float[suppressed[k].length];
            for (int i = 0; i < expected.length; i++) {
                expected[i] = reference(suppressed[k][i]);
            }
            assertArrayEquals(bits(expected), bits(got.scaled()[k]), "object " + k + " of " + n);
            assertEquals(MaskOverlaps.area(MaskOverlaps.binary(suppressed[k])) > 0, got.present()[k]);
        }
        return got;
    }

    /** sigmoid x 20 - 10 as the encoder's input was first written. */
    private static float reference(float v) {
        return Propagation.sigmoid(v) * 20f - 10f;
    }

    /** A disc of logits between about -30 and +30 (saturated and not), at a random place and size. */
    private static float[] blob(Random r) {
        float[] m = new float[LOW * LOW];
        int cx = r.nextInt(LOW);
        int cy = r.nextInt(LOW);
        float rad = 2 + r.nextInt(LOW / 2);
        float amp = 5 + 25 * r.nextFloat();
        for (int y = 0; y < LOW; y++) {
            for (int x = 0; x < LOW; x++) {
                m[y * LOW + x] = (float) (amp * Math.tanh((rad - Math.hypot(x - cx, y - cy)) / 3));
            }
        }
        return m;
    }

    private static void assertSameFloat(float expected, float actual, float at) {
        assertEquals(Float.floatToIntBits(expected), Float.floatToIntBits(actual), "at " + at);
    }

    private static int[] bits(float[] x) {
        int[] out = new int[x.length];
        for (int i = 0; i < x.length; i++) {
            out[i] = Float.floatToIntBits(x[i]);
        }
        return out;
    }
}
