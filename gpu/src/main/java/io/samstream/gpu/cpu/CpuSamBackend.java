package io.samstream.gpu.cpu;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;

/**
 * SAM in fp32 on the CPU: the numerical reference for the CUDA backend and the fallback without a GPU.
 * It follows Meta's segment-anything modules step by step (same layer order, epsilons, exact GELU,
 * decomposed relative position bias, padding rules); the kernels are blocked and multi-threaded but never
 * trade accuracy for speed.
 *
 * <p>All weights are read and checked against the config at construction, so a wrong checkpoint fails
 * here with the offending key and shape. The backend keeps its own re-laid-out copy of the weights; the
 * {@link StateDict} may be dropped afterwards. Thread-safe: concurrent calls share the thread pool.
 */
public final class CpuSamBackend implements SamBackend {
    private final SamConfig config;
    private final CpuThreadPool pool;
    private final ImageEncoderCpu imageEncoder;
    private final PromptEncoderCpu promptEncoder;
    private final MaskDecoderCpu maskDecoder;
    private String variant = "";

    /**
     * @param weights the model's tensors under Meta's key names
     * @param config  the model's shape (normally inferred from the same checkpoint)
     * @param threads total worker threads for the kernels, at least 1
     */
    public CpuSamBackend(StateDict weights, SamConfig config, int threads) {
        this(weights, config, threads, true);
    }

    /**
     * As {@link #CpuSamBackend(StateDict, SamConfig, int)}, with {@code variant} (e.g. "encoder 2:4 (all encoder
     * linears)") added to {@link #name()}, so outputs say which model variant made them.
     */
    public CpuSamBackend(StateDict weights, SamConfig config, int threads, String variant) {
        this(weights, config, threads, true);
        this.variant = variant == null || variant.isEmpty() ? "" : ", " + variant;
    }

    /**
     * The prompt encoder and mask decoder only (no image encoder weights are read or kept):
     * {@link #encode} then throws. For backends that run the image encoder elsewhere (CUDA) and decode here.
     */
    public static CpuSamBackend decoderOnly(StateDict weights, SamConfig config, int threads) {
        return new CpuSamBackend(weights, config, threads, false);
    }

    private CpuSamBackend(StateDict weights, SamConfig config, int threads, boolean withImageEncoder) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1, got " + threads);
        }
        this.config = config;
        this.imageEncoder = withImageEncoder ? new ImageEncoderCpu(weights, config) : null;
        this.promptEncoder = new PromptEncoderCpu(weights, config);
        this.maskDecoder = new MaskDecoderCpu(weights, config);
        this.pool = new CpuThreadPool(threads);
    }

    @Override
    public SamConfig config() {
        return config;
    }

    @Override
    public String name() {
        return "cpu fp32 (" + pool.threads() + (pool.threads() == 1 ? " thread" : " threads") + variant + ")";
    }

    /** The prompt encoder, whose intermediate embeddings parity tests compare with the reference's. */
    public PromptEncoderCpu promptEncoder() {
        return promptEncoder;
    }

    @Override
    public Tensor encode(Tensor images) {
        if (imageEncoder == null) {
            throw new IllegalStateException("this CPU backend was built for decoding only (no image encoder)");
        }
        int s = config.imageSize();
        if (images.rank() != 4 || images.dim(1) != 3 || images.dim(2) != s || images.dim(3) != s) {
            throw new IllegalArgumentException(
                    "images must be [B, 3, " + s + ", " + s + "], got " + images.shapeString());
        }
        int batch = images.dim(0);
        int c = config.promptDim();
        int e = config.embeddingSize();
        Tensor out = Tensor.zeros(batch, c, e, e);
        for (int b = 0; b < batch; b++) {
            imageEncoder.encode(pool, images.data(), b * 3 * s * s, out.data(), b * c * e * e);
        }
        return out;
    }

    @Override
    public DecoderOutput decode(Tensor embedding, Prompt prompt, boolean multimask) {
        int c = config.promptDim();
        int e = config.embeddingSize();
        if (!embedding.hasShape(1, c, e, e)) {
            throw new IllegalArgumentException(
                    "embedding must be [1, " + c + ", " + e + ", " + e + "], got " + embedding.shapeString());
        }
        float[] sparse = promptEncoder.sparse(prompt);
        float[] dense = promptEncoder.dense(pool, prompt.maskInput());
        return maskDecoder.decode(pool, embedding.data(), 0, sparse, PromptEncoderCpu.sparseCount(prompt), dense,
                promptEncoder.densePositionalEncoding(), multimask);
    }

    @Override
    public void close() {
        pool.close();
    }
}
