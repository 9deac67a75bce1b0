package io.samstream.config;

/**
 * The validated {@code samstream.cuda} section: how the CUDA backend runs its kernels, read once when the backend is
 * made. The kernels themselves (GEMM tiles, attention variants) follow from the GPU's compute capability, not from
 * here.
 *
 * @param graphs        the image encoder replays one captured CUDA graph per batch size; off launches every kernel of
 *                      every forward pass (slower at small batches; for profiling and as an escape hatch)
 * @param decoderGraphs the mask decoder replays one captured CUDA graph per batch shape; off launches its ~80 kernels
 *                      one by one
 */
public record CudaSettings(boolean graphs, boolean decoderGraphs) {
    /** What reference.conf says: graphs on for both. */
    public static final CudaSettings DEFAULTS = new CudaSettings(true, true);
}
