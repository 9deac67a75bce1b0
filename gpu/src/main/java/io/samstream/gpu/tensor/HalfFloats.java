package io.samstream.gpu.tensor;

/** Exact widening of IEEE half precision and bfloat16 bit patterns to fp32 (Java 17 has neither built in). */
public final class HalfFloats {
    private HalfFloats() {}

    public static float halfToFloat(short bits) {
        int h = bits & 0xffff;
        int sign = (h & 0x8000) << 16;
        int exponent = (h >>> 10) & 0x1f;
        int mantissa = h & 0x3ff;
        if (exponent == 0x1f) {
            // Infinity or NaN; the NaN payload moves to the top of the fp32 mantissa as torch does.
            return Float.intBitsToFloat(sign | 0x7f80_0000 | (mantissa << 13));
        }
        if (exponent == 0) {
            // Zero or subnormal: mantissa * 2^-24, exact in fp32.
            float magnitude = mantissa * 0x1p-24f;
            return sign == 0 ? magnitude : -magnitude;
        }
        // Normal: rebias the exponent from 15 to 127.
        return Float.intBitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
    }

    public static float bfloat16ToFloat(short bits) {
        // bfloat16 is the upper half of an fp32.
        return Float.intBitsToFloat((bits & 0xffff) << 16);
    }
}
