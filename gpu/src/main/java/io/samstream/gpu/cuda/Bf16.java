package io.samstream.gpu.cuda;

/**
 * bfloat16 conversions on the host: the top 16 bits of an IEEE float, rounded to nearest even (what
 * PyTorch's {@code .to(torch.bfloat16)} and CUDA's {@code __float2bfloat16_rn} do). NaN stays NaN.
 */
public final class Bf16 {
    /** A quiet NaN; used to poison output buffers in tests so unwritten elements show up. */
    public static final short NAN = (short) 0x7FC0;

    private Bf16() {}

    public static short fromFloat(float f) {
        int bits = Float.floatToRawIntBits(f);
        if ((bits & 0x7FFF_FFFF) > 0x7F80_0000) {
            return (short) ((bits >>> 16) | 0x0040);   // NaN: keep it a (quiet) NaN
        }
        int roundingBias = 0x7FFF + ((bits >>> 16) & 1);
        return (short) ((bits + roundingBias) >>> 16);
    }

    public static float toFloat(short h) {
        return Float.intBitsToFloat((h & 0xFFFF) << 16);
    }

    /** The float nearest to {@code f} that bf16 can hold. */
    public static float round(float f) {
        return toFloat(fromFloat(f));
    }

    public static short[] fromFloats(float[] src) {
        short[] out = new short[src.length];
        for (int i = 0; i < src.length; i++) {
            out[i] = fromFloat(src[i]);
        }
        return out;
    }

    public static float[] toFloats(short[] src) {
        float[] out = new float[src.length];
        for (int i = 0; i < src.length; i++) {
            out[i] = toFloat(src[i]);
        }
        return out;
    }
}
