package io.samstream.gpu.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class HalfFloatsTest {

    /** IEEE binary16 by its definition, computed in double: (-1)^s * 2^(e-15) * 1.m, or 2^-14 * 0.m. */
    private static double halfByDefinition(int bits) {
        int sign = bits >>> 15;
        int exponent = (bits >>> 10) & 0x1f;
        int mantissa = bits & 0x3ff;
        double magnitude;
        if (exponent == 0x1f) {
            magnitude = mantissa == 0 ? Double.POSITIVE_INFINITY : Double.NaN;
        } else if (exponent == 0) {
            magnitude = Math.scalb((double) mantissa, -24);
        } else {
            magnitude = Math.scalb((double) (1024 + mantissa), exponent - 25);
        }
        return sign == 1 ? -magnitude : magnitude;
    }

    @Test
    void everyHalfPrecisionPatternWidensExactly() {
        for (int bits = 0; bits < 0x10000; bits++) {
            double expected = halfByDefinition(bits);
            float actual = HalfFloats.halfToFloat((short) bits);
            if (Double.isNaN(expected)) {
                assertTrue(Float.isNaN(actual), "NaN pattern 0x" + Integer.toHexString(bits));
            } else {
                assertEquals(Double.doubleToLongBits(expected), Double.doubleToLongBits(actual),
                        "pattern 0x" + Integer.toHexString(bits));
            }
        }
    }

    @Test
    void bfloat16IsTheUpperHalfOfAFloat() {
        assertEquals(1f, HalfFloats.bfloat16ToFloat((short) 0x3F80));
        assertEquals(-3f, HalfFloats.bfloat16ToFloat((short) 0xC040));
        assertEquals(3.140625f, HalfFloats.bfloat16ToFloat((short) 0x4049));
        assertEquals(0x1p-133f, HalfFloats.bfloat16ToFloat((short) 0x0001));
        assertEquals(Float.NEGATIVE_INFINITY, HalfFloats.bfloat16ToFloat((short) 0xFF80));
        assertTrue(Float.isNaN(HalfFloats.bfloat16ToFloat((short) 0x7FC0)));
    }
}
