package io.samstream.gpu.cuda.kernels;

import static io.samstream.gpu.cuda.LaunchChecks.ptr;
import static io.samstream.gpu.cuda.LaunchChecks.require;
import static io.samstream.gpu.cuda.LaunchChecks.requireBf16;
import static io.samstream.gpu.cuda.LaunchChecks.requireBytes;

import java.util.Locale;

import jcuda.Pointer;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;

/**
 * The image encoder's data movement (encoder_ops.cuh): patch rows, the position embedding, the neck's 3x3 im2col and
 * 2x2 transposed-convolution scatter, and the bf16 tokens to fp32 channels-first embeddings. Grid-stride kernels of 256 threads.
 */
public final class EncoderOpsKernels {
    private static final String PATCHIFY = "samstream_patchify_f32", ADD_PERIODIC = "samstream_add_periodic_bf16",
            IM2COL3X3 = "samstream_im2col3x3_bf16", CONVT_SCATTER = "samstream_convt2x2_scatter_bf16",
            TOKENS_TO_CHW = "samstream_tokens_to_chw_f32";
    /** Threads per CTA of the grid-stride kernels. */
    private static final int ELEMENTWISE_THREADS = 256;

    private final CudaKernels kernels;

    /** The EncoderOpsKernels of {@code kernels} (made at the first call, which looks its kernels up). */
    public static EncoderOpsKernels of(CudaKernels kernels) {
        return kernels.family(EncoderOpsKernels.class, EncoderOpsKernels::new);
    }

    private EncoderOpsKernels(CudaKernels kernels) {
        this.kernels = kernels;
        for (String name : new String[] {PATCHIFY, ADD_PERIODIC, IM2COL3X3, CONVT_SCATTER, TOKENS_TO_CHW}) {
            kernels.add(name, 0);
        }
    }

    /**
     * Patch embedding rows: fp32 image {@code [batch, 3, s, s]} to bf16 {@code [batch * e * e, 3 * p * p]},
     * e = s / p, columns ordered (channel, dy, dx) like the flattened Conv2d weight.
     */
    public void patchify(CudaStream stream, DeviceBuffer image, DeviceBuffer rows, int batch, int s, int p) {
        String op = String.format(Locale.ROOT, "patchify batch=%d size=%d patch=%d", batch, s, p);
        require(batch > 0 && s > 0 && p > 0, op + ": dimensions must be positive");
        require(p % 8 == 0 && s % p == 0, op + ": patch must be a multiple of 8 and divide the image size");
        long pixels = (long) batch * 3 * s * s;
        requireBytes(image, pixels * 4, op, "image (fp32)");
        requireBf16(rows, pixels, op, "rows");
        long threads = pixels / 8;
        Pointer params = Pointer.to(ptr(image), ptr(rows), Pointer.to(new int[] {batch}), Pointer.to(new int[] {s}),
                Pointer.to(new int[] {p}));
        kernels.launch(PATCHIFY, gridFor(threads), 1, 1, ELEMENTWISE_THREADS, 0, stream, params, op);
    }

    /** {@code x[i] += add[i % period]} over {@code total} bf16 values (fp32 sum, one rounding). */
    public void addPeriodic(CudaStream stream, DeviceBuffer x, DeviceBuffer add, long total, long period) {
        String op = String.format(Locale.ROOT, "addPeriodic total=%d period=%d", total, period);
        require(total > 0 && period > 0, op + ": sizes must be positive");
        require(total % 8 == 0 && period % 8 == 0, op + ": total and period must be multiples of 8");
        requireBf16(x, total, op, "x");
        requireBf16(add, period, op, "add");
        Pointer params = Pointer.to(ptr(x), ptr(add), Pointer.to(new long[] {total}), Pointer.to(new long[] {period}));
        kernels.launch(ADD_PERIODIC, gridFor(total / 8), 1, 1, ELEMENTWISE_THREADS, 0, stream, params, op);
    }

    /**
     * Rows of a 3x3, stride 1, padding 1 convolution: channels-last {@code x [batch, h, w, c]} to
     * {@code [batch * h * w, 9 * c]}, columns ordered (ky, kx, channel) (the weight must be laid out
     * {@code [out, 3, 3, c]} to match); taps outside the image are zeros.
     */
    public void im2col3x3(CudaStream stream, DeviceBuffer x, DeviceBuffer rows, int batch, int h, int w, int c) {
        im2col3x3(stream, x, rows, batch, h, w, c, 1);
    }

    /** As above with stride 1 or 2: {@code [batch * oh * ow, 9 * c]} rows, {@code oh = (h - 1) / stride + 1}. */
    public void im2col3x3(CudaStream stream, DeviceBuffer x, DeviceBuffer rows, int batch, int h, int w, int c,
                          int stride) {
        String op = String.format(Locale.ROOT, "im2col3x3 batch=%d grid=%dx%d c=%d stride=%d", batch, h, w, c, stride);
        require(batch > 0 && h > 0 && w > 0 && c > 0, op + ": dimensions must be positive");
        require(c % 8 == 0, op + ": c must be a multiple of 8");
        require(stride == 1 || stride == 2, op + ": stride must be 1 or 2");
        long pixels = (long) batch * ((h - 1) / stride + 1) * ((w - 1) / stride + 1);
        requireBf16(x, (long) batch * h * w * c, op, "x");
        requireBf16(rows, pixels * 9 * c, op, "rows");
        Pointer params = Pointer.to(ptr(x), ptr(rows), Pointer.to(new int[] {batch}), Pointer.to(new int[] {h}),
                Pointer.to(new int[] {w}), Pointer.to(new int[] {c}), Pointer.to(new int[] {stride}));
        kernels.launch(IM2COL3X3, gridFor(pixels * 9 * c / 8), 1, 1, ELEMENTWISE_THREADS, 0, stream, params, op);
    }

    /**
     * The scatter of a 2x2, stride-2 transposed convolution computed as a GEMM: {@code y [batch * h * w, 4 * c]}, the
     * four taps' outputs of each input pixel side by side (columns (dy, dx, channel): the weight laid out by {@link
     * WeightLayouts#convTransposeRows}, bias and activation in the GEMM's epilogue), to channels-last
     * {@code out [batch, 2h, 2w, c]}.
     */
    public void convTranspose2x2Scatter(CudaStream stream, DeviceBuffer y, DeviceBuffer out, int batch, int h, int w,
                                        int c) {
        String op = String.format(Locale.ROOT, "convTranspose2x2Scatter batch=%d grid=%dx%d c=%d", batch, h, w, c);
        require(batch > 0 && h > 0 && w > 0 && c > 0, op + ": dimensions must be positive");
        require(c % 8 == 0, op + ": c must be a multiple of 8");
        long values = (long) batch * h * w * 4 * c;
        requireBf16(y, values, op, "y");
        requireBf16(out, values, op, "out");
        Pointer params = Pointer.to(ptr(y), ptr(out), Pointer.to(new int[] {batch}), Pointer.to(new int[] {h}),
                Pointer.to(new int[] {w}), Pointer.to(new int[] {c}));
        kernels.launch(CONVT_SCATTER, gridFor(values / 8), 1, 1, ELEMENTWISE_THREADS, 0, stream, params, op);
    }

    /** bf16 tokens {@code [batch, t, c]} to fp32 channels-first {@code [batch, c, t]}. */
    public void tokensToChw(CudaStream stream, DeviceBuffer tokens, DeviceBuffer out, int batch, int t, int c) {
        String op = String.format(Locale.ROOT, "tokensToChw batch=%d t=%d c=%d", batch, t, c);
        require(batch > 0 && t > 0 && c > 0, op + ": dimensions must be positive");
        require(batch <= 65535 && (c + 31) / 32 <= 65535, op + ": too large for one launch");
        long n = (long) batch * t * c;
        requireBf16(tokens, n, op, "tokens");
        requireBytes(out, n * 4, op, "out (fp32)");
        Pointer params = Pointer.to(ptr(tokens), ptr(out), Pointer.to(new int[] {t}), Pointer.to(new int[] {c}));
        kernels.launch2d(TOKENS_TO_CHW, (t + 31) / 32, (c + 31) / 32, batch, stream, params, op);
    }

    /** Grid-stride kernels: enough CTAs for a few waves, never more than the work needs. */
    private int gridFor(long threads) {
        long ctas = (threads + ELEMENTWISE_THREADS - 1) / ELEMENTWISE_THREADS;
        long cap = (long) kernels.context().info().multiprocessors() * 16;
        return (int) Math.max(1, Math.min(ctas, cap));
    }
}
