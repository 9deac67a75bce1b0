package io.samstream.gpu.cuda;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.cuda.kernels.AttentionKernels;
import io.samstream.gpu.cuda.kernels.EncoderOpsKernels;
import io.samstream.gpu.cuda.kernels.Fp8GemmKernels;
import io.samstream.gpu.cuda.kernels.GemmKernels;
import io.samstream.gpu.cuda.kernels.NormKernels;
import io.samstream.gpu.cuda.kernels.Sam2Kernels;
import io.samstream.gpu.cuda.kernels.SparseGemmKernels;


/**
 * What the GPU tests share: one context, the kernels, a 2 GiB device pool, a stream and a pinned
 * staging buffer; bf16 uploads and downloads; the error measures the checks use.
 *
 * <p>{@link #assumeGpu()} skips the calling test (JUnit assumption) when {@link CudaAvailability} says
 * no GPU is usable, with its reason, e.g. "GPU tests skipped: no CUDA GPU found" on CI.
 */
public final class GpuTestSupport implements AutoCloseable {
    public static final long POOL_BYTES = 2L << 30;
    public static final int STAGING_BYTES = 64 << 20;

    public final CudaContext context;
    public final CudaKernels kernels;
    public final DeviceMemoryPool pool;
    public final CudaStream stream;
    public final PinnedBuffer staging;

    private GpuTestSupport() {
        context = CudaContext.open(0);
        kernels = new CudaKernels(context);
        pool = new DeviceMemoryPool(context, POOL_BYTES);
        stream = new CudaStream(context);
        staging = new PinnedBuffer(context, STAGING_BYTES, "test staging");
    }

    public static void assumeGpu() {
        GpuTests.assumeGpu();
    }

    /** Opens everything on device 0 (callers check {@link CudaAvailability} first). */
    public static GpuTestSupport open() {
        GpuTestSupport gpu = new GpuTestSupport();
        // Every launcher family the tests use, so that the table printed lists their kernels.
        GemmKernels.of(gpu.kernels);
        SparseGemmKernels.of(gpu.kernels);
        Fp8GemmKernels.of(gpu.kernels);
        NormKernels.of(gpu.kernels);
        EncoderOpsKernels.of(gpu.kernels);
        AttentionKernels.of(gpu.kernels);
        Sam2Kernels.of(gpu.kernels);
        System.out.println(gpu.kernels.describe());
        return gpu;
    }

    /** Uploads {@code values} as bf16 into a fresh pool buffer (synchronously). */
    public DeviceBuffer upload(float[] values, String label) {
        DeviceBuffer b = pool.allocateBf16(values.length, label);
        write(b, values);
        return b;
    }

    public void write(DeviceBuffer b, float[] values) {
        int chunk = STAGING_BYTES / 2;
        for (int start = 0; start < values.length; start += chunk) {
            int n = Math.min(chunk, values.length - start);
            float[] part = new float[n];
            System.arraycopy(values, start, part, 0, n);
            staging.putBf16(0, part);
            stream.upload(staging, 0, b, (long) start * 2, (long) n * 2);
            stream.synchronize();
        }
    }

    /** A buffer of {@code count} bf16 NaNs: every element the kernel fails to write stays NaN. */
    public DeviceBuffer poisoned(long count, String label) {
        DeviceBuffer b = pool.allocateBf16(count, label);
        stream.fill16(b, Bf16.NAN);
        return b;
    }

    /** NaN elements after a GEMM's output C: a kernel that writes past the end of C changes one. */
    public static final int GUARD = 4096;

    /**
     * A GEMM's bf16 output {@code c} of {@code count} values inside {@code all} = c + {@link #GUARD} NaNs, and the
     * residual to pass: none, a buffer of its own, or (in place) {@code c} itself holding it.
     */
    public record GuardedOutput(DeviceBuffer all, DeviceBuffer c, DeviceBuffer residual, int count) {
        /** Everything in {@link #all}, guard included (waits for the stream). */
        public float[] download(GpuTestSupport gpu) {
            return gpu.download(all, count + GUARD);
        }
    }

    /**
     * C poisoned with NaNs and followed by the guard; {@code residual} (may be null) uploaded on its own, or, when
     * {@code inPlace}, written into C, which is then the residual too.
     */
    public GuardedOutput guardedOutput(int count, float[] residual, boolean inPlace) {
        DeviceBuffer all;
        DeviceBuffer res = null;
        if (inPlace) {
            float[] withGuard = java.util.Arrays.copyOf(residual, count + GUARD);
            java.util.Arrays.fill(withGuard, count, withGuard.length, Float.NaN);
            all = upload(withGuard, "c (= residual) + guard");
        } else {
            all = poisoned((long) count + GUARD, "c + guard");
            res = residual != null ? upload(residual, "residual") : null;
        }
        DeviceBuffer c = all.slice(0, (long) count * 2, "c");
        return new GuardedOutput(all, c, inPlace ? c : res, count);
    }

    /** {@code got} (C + guard) has every element of C written (not NaN) and none of the guard. */
    public static void assertWrittenExactly(String what, float[] got, int count) {
        for (int i = 0; i < got.length; i++) {
            if (i < count) {
                assertTrue(!Float.isNaN(got[i]), what + ": element " + i + " of C was never written");
            } else {
                assertTrue(Float.isNaN(got[i]), what + ": write past the end of C at element " + i);
            }
        }
    }

    /** Waits for the stream, then reads {@code count} bf16 values from {@code b} (from element {@code from}). */
    public float[] download(DeviceBuffer b, long from, int count) {
        stream.synchronize();
        float[] out = new float[count];
        int chunk = STAGING_BYTES / 2;
        for (int start = 0; start < count; start += chunk) {
            int n = Math.min(chunk, count - start);
            stream.download(b, (from + start) * 2, staging, 0, (long) n * 2);
            stream.synchronize();
            System.arraycopy(staging.getBf16(0, n), 0, out, start, n);
        }
        return out;
    }

    public float[] download(DeviceBuffer b, int count) {
        return download(b, 0, count);
    }

    /** Uploads raw bytes (e4m3 values, u8 data) into a fresh pool buffer (synchronously). */
    public DeviceBuffer uploadBytes(byte[] values, String label) {
        DeviceBuffer b = pool.allocate(Math.max(values.length, 1), label);
        for (int start = 0; start < values.length; start += STAGING_BYTES) {
            int n = Math.min(STAGING_BYTES, values.length - start);
            staging.buffer().put(values, start, n);
            stream.upload(staging, 0, b, start, n);
            stream.synchronize();
        }
        return b;
    }

    /** Uploads fp32 values into a fresh pool buffer (synchronously). */
    public DeviceBuffer uploadF32(float[] values, String label) {
        java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate(values.length * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        bytes.asFloatBuffer().put(values);
        return uploadBytes(bytes.array(), label);
    }

    /** Waits for the stream, then reads {@code count} bytes from the start of {@code b}. */
    public byte[] downloadBytes(DeviceBuffer b, int count) {
        stream.synchronize();
        byte[] out = new byte[count];
        for (int start = 0; start < count; start += STAGING_BYTES) {
            int n = Math.min(STAGING_BYTES, count - start);
            stream.download(b, start, staging, 0, n);
            stream.synchronize();
            staging.buffer().get(out, start, n);
        }
        return out;
    }

    /** Waits for the stream, then reads {@code count} fp32 values from the start of {@code b}. */
    public float[] downloadF32(DeviceBuffer b, int count) {
        float[] out = new float[count];
        java.nio.ByteBuffer.wrap(downloadBytes(b, count * 4)).order(java.nio.ByteOrder.LITTLE_ENDIAN).asFloatBuffer()
                .get(out);
        return out;
    }

    @Override
    public void close() {
        staging.close();
        stream.close();
        pool.close();
        kernels.close();
        context.close();
    }

    // ---- data and error measures --------------------------------------------------------------------

    /**
     * A whole output against its reference as the model-level GPU tests judge it: every value finite, cosine at
     * least {@code minCosine} and relative L2 error at most {@code maxRelL2} (both printed).
     */
    public static void assertCosineAndRelL2(String what, float[] ref, float[] out, double minCosine, double maxRelL2) {
        org.junit.jupiter.api.Assertions.assertEquals(ref.length, out.length, what + " size");
        double num = 0, den = 0, dot = 0, outSq = 0;
        for (int i = 0; i < ref.length; i++) {
            assertTrue(Float.isFinite(out[i]), what + ": non-finite value at " + i);
            double d = out[i] - ref[i];
            num += d * d;
            den += (double) ref[i] * ref[i];
            dot += (double) ref[i] * out[i];
            outSq += (double) out[i] * out[i];
        }
        double rel = Math.sqrt(num / Math.max(den, 1e-30));
        double cosine = dot / Math.sqrt(Math.max(den * outSq, 1e-30));
        System.out.printf("%s: relative L2 %.3e, cosine %.6f%n", what, rel, cosine);
        assertTrue(cosine >= minCosine, what + ": cosine " + cosine + " < " + minCosine);
        assertTrue(rel <= maxRelL2, what + ": relative L2 error " + rel + " > " + maxRelL2);
    }

    /** Gaussian values of standard deviation {@code std}, already rounded to bf16 (what the GPU sees). */
    public static float[] randomBf16(Random rnd, int n, double std) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = Bf16.round((float) (rnd.nextGaussian() * std));
        }
        return v;
    }

    /**
     * Asserts {@code |out - ref| <= rel * |ref| + abs} element-wise, no NaN, and prints the relative L2
     * error {@code ||out - ref|| / ||ref||}; returns that error.
     */
    public static double assertClose(String what, float[] ref, float[] out, double rel, double abs) {
        double num = 0, den = 0, maxErr = 0;
        int worst = -1;
        for (int i = 0; i < ref.length; i++) {
            double d = (double) out[i] - ref[i];
            if (Float.isNaN(out[i])) {
                throw new AssertionError(what + ": element " + i + " is NaN (never written?), expected " + ref[i]);
            }
            num += d * d;
            den += (double) ref[i] * ref[i];
            double excess = Math.abs(d) - (rel * Math.abs(ref[i]) + abs);
            if (excess > 0 && (worst < 0 || excess > maxErr)) {
                maxErr = excess;
                worst = i;
            }
        }
        double relL2 = Math.sqrt(num / Math.max(den, 1e-30));
        System.out.printf("%s: relative L2 error %.3e over %d values%n", what, relL2, ref.length);
        if (worst >= 0) {
            int bad = 0;
            for (int i = 0; i < ref.length; i++) {
                if (Math.abs((double) out[i] - ref[i]) > rel * Math.abs(ref[i]) + abs) {
                    bad++;
                }
            }
            throw new AssertionError(String.format("%s: %d of %d values off; worst at %d: got %g, expected %g "
                    + "(tolerance %g); relative L2 error %.3e", what, bad, ref.length, worst, out[worst], ref[worst],
                    rel * Math.abs(ref[worst]) + abs, relL2));
        }
        assertTrue(relL2 < 1e-2, what + ": relative L2 error " + relL2);
        return relL2;
    }

    /** {@code count} random rows of {@code m}, the first and the last among them: where a sampled check looks. */
    public static int[] sampleRows(Random rnd, int count, int m) {
        int[] rows = rnd.ints(count, 0, m).toArray();
        rows[0] = 0;
        rows[1] = m - 1;
        return rows;
    }

    /** The given rows of a row-major {@code [*, n]} matrix, one after the other. */
    public static float[] gatherRows(float[] matrix, int[] rows, int n) {
        float[] out = new float[rows.length * n];
        for (int i = 0; i < rows.length; i++) {
            System.arraycopy(matrix, rows[i] * n, out, i * n, n);
        }
        return out;
    }

    /**
     * An 8-bit test image of w x h: gradients, hard edges, noise and saturated bytes, so that every resize weight and
     * the clipping matter. The same for the same seed.
     */
    public static RgbImage testImage(int w, int h, long seed) {
        Random rnd = new Random(seed);
        byte[] rgb = new byte[w * h * 3];
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                for (int c = 0; c < 3; c++) {
                    int v = ((x * (c + 1) * 255) / Math.max(1, w - 1) + (y / 7 % 2) * 90 + rnd.nextInt(40)) % 256;
                    rgb[(y * w + x) * 3 + c] = (byte) (rnd.nextInt(50) == 0 ? (rnd.nextBoolean() ? 0 : 255) : v);
                }
            }
        }
        return new RgbImage(w, h, rgb);
    }

    /** Token ids read as int64 from a fixture, as ints. */
    public static int[] ints(long[] v) {
        int[] out = new int[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = (int) v[i];
        }
        return out;
    }

    public static double rms(float[] v) {
        double s = 0;
        for (float x : v) {
            s += (double) x * x;
        }
        return Math.sqrt(s / Math.max(1, v.length));
    }
}
