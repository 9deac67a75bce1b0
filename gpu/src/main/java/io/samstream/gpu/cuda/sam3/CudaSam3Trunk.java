package io.samstream.gpu.cuda.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.GpuWorkspace;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3Trunk;

/**
 * SAM 3's trunk on a GPU of its own: opens the context, stream, staging and a pool sized for the trunk's weights and
 * one image's activations, and runs {@link CudaSam3Vit} behind the CPU model's {@link Sam3Trunk} seam
 * ({@link #factory}). Closing it frees the GPU. One pass at a time (the CPU model calls it from one thread).
 */
public final class CudaSam3Trunk implements Sam3Trunk {
    private static final long STAGING_BYTES = 32L << 20;

    private final GpuWorkspace gpu;
    private final CudaSam3Vit vit;
    private boolean closed;

    /** The factory a {@code Sam3Model} takes: the trunk on GPU {@code ordinal}. */
    public static Sam3Trunk.Factory factory(int ordinal) {
        return (sd, vision, cpuPool) -> open(sd, vision, ordinal);
    }

    /** Opens GPU {@code ordinal} and uploads the trunk; shapes the kernels cannot run fail before any GPU work. */
    public static CudaSam3Trunk open(StateDict sd, Sam3Config.Vision vision, int ordinal) {
        CudaSam3Vit.checkSupported(vision, 1);
        GpuWorkspace gpu = GpuWorkspace.open(ordinal, STAGING_BYTES, poolBytes(vision), "SAM 3 trunk");
        try {
            return new CudaSam3Trunk(gpu,
                    new CudaSam3Vit(sd, vision, 1, gpu.kernels(), gpu.stream(), gpu.pool(), gpu.staging()));
        } catch (RuntimeException e) {
            gpu.close();
            throw e;
        }
    }

    private CudaSam3Trunk(GpuWorkspace gpu, CudaSam3Vit vit) {
        this.gpu = gpu;
        this.vit = vit;
    }

    @Override
    public float[] forward(float[] chw) {
        if (closed) {
            throw new IllegalStateException("the CUDA SAM 3 trunk is closed");
        }
        return vit.forward(chw);
    }

    /** "GPU name (bf16)" for logs and masks.json. */
    @Override
    public String describe() {
        return gpu.context().info().describe() + " (bf16)";
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        gpu.close();
    }

    /**
     * The pool: the weights in bf16 (upper bound: every trunk tensor, each 256-byte aligned, padding of the MLP and
     * the patch rows included) plus one image's activations, and 64 MiB to spare.
     */
    static long poolBytes(Sam3Config.Vision v) {
        long e = v.embedDim(), grid = v.grid(), mlp = CudaSam3Vit.roundUp8(v.mlpHidden());
        long patchCols = CudaSam3Vit.roundUp8(3 * v.patchSize() * v.patchSize());
        long perBlock = 4 * align(e * 2) + align(3 * e * e * 2) + align(3 * e * 2) + align(e * e * 2) + align(e * 2)
                + align(mlp * e * 2) + align(mlp * 2) + align(e * mlp * 2) + align(e * 2);
        long weights = v.depth() * perBlock + align(e * patchCols * 2) + align(grid * grid * e * 2) + 2 * align(e * 2)
                + 4 * align(grid * grid * v.headDim() / 2 * 4);
        int per = (v.grid() + v.windowSize() - 1) / v.windowSize();
        long padded = Math.max(grid * grid, (long) per * per * v.windowSize() * v.windowSize());
        long activations = align(3L * v.imageSize() * v.imageSize() * 4) + 2 * align(grid * grid * e * 2)
                + 2 * align(padded * e * 2) + align(padded * 3 * e * 2) + align(grid * grid * Math.max(mlp, patchCols) * 2);
        return weights + activations + (64L << 20);
    }

    private static long align(long bytes) {
        return BumpAllocator.alignUp(Math.max(bytes, 1));
    }
}
