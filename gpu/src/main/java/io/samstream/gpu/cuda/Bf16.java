package io.samstream.gpu.cuda;

import java.nio.ShortBuffer;
import java.util.stream.IntStream;

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

    /** Values below which a bulk conversion stays on the calling thread (a fork costs more than it saves). */
    static final int PARALLEL_FROM = 1 << 18;
    private static final int CHUNK = 1 << 16;

    /**
     * Writes {@code src[from, from + count)} as bf16 into {@code dst} from element {@code at} (absolute: the buffer's
     * position is untouched). Staging a large feature map is millions of values; runs of at least {@value
     * #PARALLEL_FROM} are converted on the common pool's threads, chunk by chunk.
     */
    public static void put(ShortBuffer dst, int at, float[] src, int from, int count) {
        chunks(count, (lo, hi) -> {
            for (int i = lo; i < hi; i++) {
                dst.put(at + i, fromFloat(src[from + i]));
            }
        });
    }

    /** Reads {@code count} bf16 values of {@code src} from element {@code at} into {@code dst[from, from + count)}. */
    public static void get(ShortBuffer src, int at, float[] dst, int from, int count) {
        chunks(count, (lo, hi) -> {
            for (int i = lo; i < hi; i++) {
                dst[from + i] = toFloat(src.get(at + i));
            }
        });
    }

    private interface Range {
        void run(int lo, int hi);
    }

    /**
     * {@code range} over [0, count) on the calling thread when under {@value #PARALLEL_FROM} values, else in chunks of
     * {@value #CHUNK} on the common pool.
     */
    private static void chunks(int count, Range range) {
        if (count < PARALLEL_FROM) {
            range.run(0, count);
            return;
        }
        int n = (count + CHUNK - 1) / CHUNK;
        IntStream.range(0, n).parallel().forEach(c -> range.run(c * CHUNK, Math.min(count, (c + 1) * CHUNK)));
    }
}
