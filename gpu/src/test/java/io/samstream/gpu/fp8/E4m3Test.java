package io.samstream.gpu.fp8;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

class E4m3Test {
    /** Known codes of the format (OCP FP8 E4M3FN). */
    @Test
    void decodesTheFormatsLandmarks() {
        assertEquals(0f, E4m3.decode((byte) 0x00));
        assertEquals(0x1p-9f, E4m3.decode((byte) 0x01));   // smallest subnormal
        assertEquals(7 * 0x1p-9f, E4m3.decode((byte) 0x07));   // largest subnormal
        assertEquals(0x1p-6f, E4m3.decode((byte) 0x08));   // smallest normal
        assertEquals(1f, E4m3.decode((byte) 0x38));
        assertEquals(1.5f, E4m3.decode((byte) 0x3C));
        assertEquals(-2f, E4m3.decode((byte) 0xC0));
        assertEquals(448f, E4m3.decode((byte) 0x7E));
        assertEquals(-448f, E4m3.decode((byte) 0xFE));
        assertTrue(Float.isNaN(E4m3.decode((byte) 0x7F)));
        assertTrue(Float.isNaN(E4m3.decode((byte) 0xFF)));
    }

    /** Every finite code decodes to a value that encodes back to it (+0 and -0 keep their signs). */
    @Test
    void everyFiniteCodeRoundTrips() {
        for (int b = 0; b < 256; b++) {
            if ((b & 0x7F) == 0x7F) {
                continue;
            }
            assertEquals((byte) b, E4m3.encode(E4m3.decode((byte) b)), "code 0x" + Integer.toHexString(b));
        }
    }

    /**
     * Against a reference that knows nothing of the bit layout: the nearest of all 253 finite magnitudes, a tie going
     * to the code with an even last bit, anything past 448 saturating. Random values over the whole range, exact
     * midpoints between neighbours, and the points just beside them.
     */
    @Test
    void roundsToNearestEvenLikeABruteForceSearch() {
        Random rnd = new Random(7);
        for (int i = 0; i < 200_000; i++) {
            float x = (float) (Math.scalb(rnd.nextDouble(), rnd.nextInt(22) - 12) * (rnd.nextBoolean() ? 1 : -1));
            assertEquals(reference(x), E4m3.encode(x), () -> "x = " + x);
        }
        for (int b = 0; b < 0x7E; b++) {
            float lo = E4m3.decode((byte) b), hi = E4m3.decode((byte) (b + 1));
            float mid = (lo + hi) / 2;   // exact in fp32
            for (float x : new float[] {mid, Math.nextDown(mid), Math.nextUp(mid), -mid}) {
                assertEquals(reference(x), E4m3.encode(x), () -> "x = " + x + " between codes " + lo + " and " + hi);
            }
            assertEquals((byte) ((b & 1) == 0 ? b : b + 1), E4m3.encode(mid), "tie between " + lo + " and " + hi);
        }
    }

    @Test
    void saturatesAndKeepsNanAndSignedZero() {
        assertEquals((byte) 0x7E, E4m3.encode(448f));
        assertEquals((byte) 0x7E, E4m3.encode(470f));
        assertEquals((byte) 0x7E, E4m3.encode(1e30f));
        assertEquals((byte) 0x7E, E4m3.encode(Float.POSITIVE_INFINITY));
        assertEquals((byte) 0xFE, E4m3.encode(Float.NEGATIVE_INFINITY));
        assertEquals((byte) 0x7F, E4m3.encode(Float.NaN));
        assertEquals((byte) 0x80, E4m3.encode(-0f));
        assertEquals((byte) 0x00, E4m3.encode(0x1p-11f));   // a quarter step rounds to zero
        assertEquals((byte) 0x00, E4m3.encode(0x1p-10f));   // half a step: tie to the even code 0
        assertEquals((byte) 0x02, E4m3.encode(3 * 0x1p-10f));   // 1.5 steps: tie to the even code 2
    }

    private static byte reference(float x) {
        if (Float.isNaN(x)) {
            return 0x7F;
        }
        double a = Math.abs((double) x);
        int best = 0;
        double bestErr = Double.MAX_VALUE;
        for (int b = 0; b <= 0x7E; b++) {
            double err = Math.abs(E4m3.decode((byte) b) - a);
            if (err < bestErr || (err == bestErr && (b & 1) == 0)) {
                best = b;
                bestErr = err;
            }
        }
        return (byte) (best | (Math.copySign(1f, x) < 0 ? 0x80 : 0));
    }
}
