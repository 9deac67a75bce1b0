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
 * The bf16 LayerNorm launchers (layernorm.cuh), optionally fused with a residual add, and GroupNorm with an optional
 * ReLU (group_norm.cuh).
 */
public final class NormKernels {
    private static final String LAYERNORM = "samstream_layernorm_bf16";
    private static final String GROUP_PARTIALS = "samstream_group_norm_partials_bf16",
            GROUP_APPLY = "samstream_group_norm_apply_bf16";
    /** CTAs a group's partial sums are spread over (group_norm::PARTIAL_CTAS), 256 threads each. */
    private static final int GROUP_PARTIAL_CTAS = 64, GROUP_THREADS = 256, GROUP_MAX = 32;
    private static final int LAYERNORM_ROWS_PER_CTA = 8;
    private static final int LAYERNORM_MAX_C = 2048;
    /** samstream_layernorm_bf16_v1 .. _v5: rows of at most 256 x N columns (vit_b 768: v3, vit_h 1280: v5). */
    private static final int LAYERNORM_NARROW_VECS = 5;

    private final CudaKernels kernels;

    /** The NormKernels of {@code kernels} (made at the first call, which looks its kernels up). */
    public static NormKernels of(CudaKernels kernels) {
        return kernels.family(NormKernels.class, NormKernels::new);
    }

    private NormKernels(CudaKernels kernels) {
        this.kernels = kernels;
        kernels.add(LAYERNORM, 0);
        for (int vec = 1; vec <= LAYERNORM_NARROW_VECS; vec++) {
            kernels.add(LAYERNORM + "_v" + vec, 0);
        }
        kernels.add(GROUP_PARTIALS, 0);
        kernels.add(GROUP_APPLY, 0);
    }

    /** Bytes of the scratch {@link #groupNorm} needs for {@code groups} groups (the partial sums, in double). */
    public static long groupNormScratchBytes(int groups) {
        return (long) groups * GROUP_PARTIAL_CTAS * 2 * 8;
    }

    /**
     * torch's GroupNorm of one channels-last image {@code x [pixels, c]} in place: {@code groups} groups of
     * {@code c / groups} channels, statistics over all of a group's values in double, fp32 {@code gamma} / {@code
     * beta [c]}; then ReLU when {@code relu}. {@code scratch} holds {@link #groupNormScratchBytes} bytes.
     */
    public void groupNorm(CudaStream stream, DeviceBuffer x, DeviceBuffer scratch, DeviceBuffer gamma,
                          DeviceBuffer beta, long pixels, int c, int groups, float eps, boolean relu) {
        String op = String.format(Locale.ROOT, "groupNorm pixels=%d c=%d groups=%d", pixels, c, groups);
        require(pixels > 0 && c > 0 && groups > 0, op + ": dimensions must be positive");
        require(groups <= GROUP_MAX && c % groups == 0 && c % 8 == 0,
                op + ": at most " + GROUP_MAX + " groups, c a multiple of 8 and of the groups");
        require(eps > 0 && Float.isFinite(eps), op + ": eps must be positive");
        requireBf16(x, pixels * c, op, "x");
        requireBytes(scratch, groupNormScratchBytes(groups), op, "scratch");
        requireBytes(gamma, (long) c * 4, op, "gamma");
        requireBytes(beta, (long) c * 4, op, "beta");
        Pointer partials = Pointer.to(ptr(x), ptr(scratch), Pointer.to(new long[] {pixels}), Pointer.to(new int[] {c}),
                Pointer.to(new int[] {groups}));
        kernels.launch(GROUP_PARTIALS, GROUP_PARTIAL_CTAS, groups, 1, GROUP_THREADS, 0, stream, partials, op);
        long chunks = pixels * c / 8;
        long ctas = Math.min((chunks + GROUP_THREADS - 1) / GROUP_THREADS,
                (long) kernels.context().info().multiprocessors() * 16);
        Pointer apply = Pointer.to(ptr(x), ptr(scratch), ptr(gamma), ptr(beta), Pointer.to(new long[] {pixels}),
                Pointer.to(new int[] {c}), Pointer.to(new int[] {groups}), Pointer.to(new float[] {eps}),
                Pointer.to(new int[] {relu ? 1 : 0}));
        kernels.launch(GROUP_APPLY, (int) Math.max(1, ctas), 1, 1, GROUP_THREADS, 0, stream, apply, op);
    }

    /** {@code y = LayerNorm(x)} over the last dimension {@code c} of {@code rows} rows. */
    public void layerNorm(CudaStream stream, DeviceBuffer x, DeviceBuffer gamma, DeviceBuffer beta, DeviceBuffer y,
                          int rows, int c, float eps) {
        layerNorm(stream, x, null, null, gamma, beta, y, rows, c, eps);
    }

    /**
     * {@code s = x + residual} (written to {@code sumOut} when not null), {@code y = LayerNorm(s)}.
     * With {@code residual} null, {@code s = x} and {@code sumOut} must be null. Any of x, sumOut and y
     * may be the same buffer.
     */
    public void layerNorm(CudaStream stream, DeviceBuffer x, DeviceBuffer residual, DeviceBuffer sumOut,
                          DeviceBuffer gamma, DeviceBuffer beta, DeviceBuffer y, int rows, int c, float eps) {
        String op = String.format(Locale.ROOT, "layerNorm rows=%d c=%d", rows, c);
        require(rows > 0 && c > 0, op + ": dimensions must be positive");
        require(c % 8 == 0 && c <= LAYERNORM_MAX_C, op + ": c must be a multiple of 8 and at most " + LAYERNORM_MAX_C);
        require(eps > 0 && Float.isFinite(eps), op + ": eps must be positive");
        require(residual != null || sumOut == null, op + ": sumOut needs a residual");
        long elems = (long) rows * c;
        requireBf16(x, elems, op, "x");
        requireBf16(y, elems, op, "y");
        requireBf16(gamma, c, op, "gamma");
        requireBf16(beta, c, op, "beta");
        if (residual != null) {
            requireBf16(residual, elems, op, "residual");
        }
        if (sumOut != null) {
            requireBf16(sumOut, elems, op, "sumOut");
        }
        Pointer params = Pointer.to(ptr(x), ptr(residual), ptr(sumOut), ptr(gamma), ptr(beta), ptr(y),
                Pointer.to(new int[] {rows}), Pointer.to(new int[] {c}), Pointer.to(new float[] {eps}));
        int grid = (rows + LAYERNORM_ROWS_PER_CTA - 1) / LAYERNORM_ROWS_PER_CTA;
        kernels.launch(layerNormKernel(c), grid, 1, 1, 32 * LAYERNORM_ROWS_PER_CTA, 0, stream, params, op);
    }

    /**
     * The LayerNorm kernel for rows of {@code c} columns: the one holding the fewest 8-column chunks per lane that
     * fit c (less of the row in registers, more warps resident), else the 2048-column one.
     */
    static String layerNormKernel(int c) {
        int vec = (c + 32 * 8 - 1) / (32 * 8);
        return vec <= LAYERNORM_NARROW_VECS ? LAYERNORM + "_v" + vec : LAYERNORM;
    }
}
