package io.samstream.gpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class Bf16Test {
    @Test
    void exactValuesRoundTrip() {
        for (float f : new float[] {0f, -0f, 1f, -2f, 0.5f, 3.140625f, 65280f, Float.POSITIVE_INFINITY}) {
            assertEquals(f, Bf16.round(f), "value " + f);
        }
    }

    @Test
    void roundsToNearestEven() {
        // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1).
        assertEquals(1f, Bf16.round(1f + 0x1p-8f));
        // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: to the even one (1 + 2^-6).
        assertEquals(1f + 0x1p-6f, Bf16.round(1f + 3 * 0x1p-8f));
        // Just above the halfway point rounds up.
        assertEquals(1f + 0x1p-7f, Bf16.round(1f + 0x1p-8f + 0x1p-20f));
        assertEquals((short) 0x3F80, Bf16.fromFloat(1f));
        assertEquals((short) 0xC000, Bf16.fromFloat(-2f));
    }

    @Test
    void nanStaysNanAndOverflowGoesToInfinity() {
        assertTrue(Float.isNaN(Bf16.toFloat(Bf16.fromFloat(Float.NaN))));
        assertTrue(Float.isNaN(Bf16.toFloat(Bf16.NAN)));
        assertEquals(Float.POSITIVE_INFINITY, Bf16.round(Float.MAX_VALUE));
    }

    @Test
    void relativeErrorIsAtMostHalfAnUlp() {
        java.util.Random rnd = new java.util.Random(1);
        for (int i = 0; i < 10000; i++) {
            float f = (float) (rnd.nextGaussian() * Math.exp(rnd.nextGaussian() * 5));
            assertTrue(Math.abs(Bf16.round(f) - f) <= Math.abs(f) * 0x1p-8, "value " + f);
        }
    }
}
