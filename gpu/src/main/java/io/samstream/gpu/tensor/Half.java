package io.samstream.gpu.tensor;

/** IEEE 754 binary16 to float32 (Java 17 has no {@code Float.float16ToFloat}). Every half is exact as a float. */
final class Half {
    private Half() {}

    static float toFloat(short half) {
        int bits = half & 0xFFFF;
        int sign = (bits & 0x8000) << 16;
        int exponent = (bits >>> 10) & 0x1F;
        int mantissa = bits & 0x3FF;
        if (exponent == 0) {
            // Zero or subnormal: mantissa * 2^-24, exact in float.
            float magnitude = mantissa * 0x1p-24f;
            return sign != 0 ? -magnitude : magnitude;
        }
        if (exponent == 0x1F) {
            // Infinity, or NaN with its payload moved to the float's mantissa.
            return Float.intBitsToFloat(sign | 0x7F80_0000 | (mantissa << 13));
        }
        return Float.intBitsToFloat(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
    }
}
