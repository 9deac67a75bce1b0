package io.samstream.gpu.fp8;

/**
 * The FP8 e4m3 number format (OCP "E4M3FN": 1 sign, 4 exponent bits of bias 7, 3 mantissa bits; no infinities, NaN
 * = S.1111.111, largest finite 448, smallest subnormal 2^-9) and the conversion the kernels use: round to nearest,
 * ties to even, saturating to +-448 (PTX {@code cvt.rn.satfinite.e4m3x2.f32}). Pure arithmetic, so the GPU tests can
 * ask for the kernels' exact bytes.
 */
public final class E4m3 {
    /** The largest finite e4m3 value. */
    public static final float MAX = 448f;
    private static final int MAX_BITS = 0x7E, NAN_BITS = 0x7F, MIN_NORMAL_EXP = -6;

    private E4m3() {}

    /** {@code x} as e4m3 bits: nearest value (ties to even), magnitudes beyond 448 (and infinities) saturate to 448. */
    public static byte encode(float x) {
        if (Float.isNaN(x)) {
            return (byte) NAN_BITS;
        }
        int sign = (Float.floatToRawIntBits(x) >>> 31) << 7;
        float a = Math.abs(x);
        int bits;
        if (a >= MAX) {
            bits = MAX_BITS;
        } else if (a < 0x1p-6f) {
            // Subnormal steps of 2^-9 (exact scaling); rounding up to 8 steps is the smallest normal, whose bits are 8.
            bits = (int) Math.rint(a * 512f);
        } else {
            int e = Math.getExponent(a);   // -6 .. 8
            int steps = (int) Math.rint(Math.scalb(a, 3 - e));   // 8 .. 16 eighths of 2^e; 16 carries into e + 1
            bits = Math.min(((e - MIN_NORMAL_EXP + 1) << 3) + steps - 8, MAX_BITS);
        }
        return (byte) (sign | bits);
    }

    /** The value of e4m3 bits (NaN for S.1111.111). */
    public static float decode(byte b) {
        int v = b & 0xFF, e = (v >> 3) & 15, m = v & 7;
        if ((v & 0x7F) == NAN_BITS) {
            return Float.NaN;
        }
        float mag = e == 0 ? m * 0x1p-9f : Math.scalb(1f + m / 8f, e - 7);
        return (v & 0x80) != 0 ? -mag : mag;
    }
}
