package io.samstream.config;

/**
 * How the CUDA backend runs its kernels, read once when the backend is made: the {@code samstream.cuda} section and
 * the encoder's number format ({@code samstream.model.precision}, a model key because it changes the model's results;
 * carried here because only the CUDA backend has it). The kernels themselves (GEMM tiles, attention variants) follow
 * from the GPU's compute capability, not from here.
 *
 * @param graphs        the image encoder replays one captured CUDA graph per batch size; off launches every kernel of
 *                      every forward pass (slower at small batches; for profiling and as an escape hatch)
 * @param decoderGraphs the mask decoder replays one captured CUDA graph per batch shape; off launches its ~80 kernels
 *                      one by one
 * @param precision     the image encoder blocks' Linears in bf16 or FP8 e4m3
 */
public record CudaSettings(boolean graphs, boolean decoderGraphs, ModelPrecision precision) {
    /** What reference.conf says: graphs on for both, bf16. */
    public static final CudaSettings DEFAULTS = new CudaSettings(true, true, ModelPrecision.BF16);

    public CudaSettings {
        if (precision == null) {
            throw new IllegalArgumentException("precision must not be null (ModelPrecision.BF16 for the default)");
        }
    }

    /** The bf16 encoder. */
    public CudaSettings(boolean graphs, boolean decoderGraphs) {
        this(graphs, decoderGraphs, ModelPrecision.BF16);
    }

    /** These settings with the encoder in {@code p}. */
    public CudaSettings withPrecision(ModelPrecision p) {
        return new CudaSettings(graphs, decoderGraphs, p);
    }
}
