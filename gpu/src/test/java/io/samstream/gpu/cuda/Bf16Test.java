package io.samstream.gpu.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ShortBuffer;
import java.util.Random;
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

    /** Bulk conversions (the staging buffers'), below and above the size that spreads them over threads. */
    @Test
    void bulkConversionsMatchTheScalarOnesAtAnOffset() {
        for (int count : new int[] {1000, Bf16.PARALLEL_FROM + 12345}) {
            Random rnd = new Random(count);
            float[] src = new float[count + 7];
            for (int i = 0; i < src.length; i++) {
                src[i] = (float) (rnd.nextGaussian() * 100);
            }
            ShortBuffer buffer = ByteBuffer.allocateDirect((count + 10) * 2).order(ByteOrder.LITTLE_ENDIAN)
                    .asShortBuffer();
            Bf16.put(buffer, 3, src, 7, count);
            assertEquals(0, buffer.get(2), "nothing written before the offset");
            float[] back = new float[count + 5];
            Bf16.get(buffer, 3, back, 5, count);
            for (int i = 0; i < count; i++) {
                assertEquals(Bf16.fromFloat(src[7 + i]), buffer.get(3 + i), "bf16 of value " + i);
                assertEquals(Bf16.round(src[7 + i]), back[5 + i], "value " + i + " back");
            }
            assertEquals(0f, back[4], "nothing read before the offset");
        }
    }
}
