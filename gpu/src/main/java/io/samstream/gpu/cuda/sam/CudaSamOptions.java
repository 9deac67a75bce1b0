package io.samstream.gpu.cuda.sam;

import io.samstream.config.CudaSettings;
import io.samstream.config.ModelSparsity;

/**
 * How a {@link CudaSamBackend} is made. {@link #builder} starts from the defaults and changes what is named:
 * <pre>{@code CudaSamOptions.builder(8).maxPromptSets(16).sparsity(sparsity).device(1).build()}</pre>
 *
 * @param maxBatch       the largest batch {@code encode} takes (the encoder's activations are sized for it)
 * @param decoderThreads CPU threads of the CPU mask decoder, used only when the GPU one cannot run the model
 *                       (default 1)
 * @param maxPromptSets  prompt sets the GPU mask decoder takes in one batch (larger calls are chunked; default
 *                       {@value CudaSamBackend#DEFAULT_MAX_PROMPT_SETS})
 * @param sparsity       which encoder Linears run on the sparse tensor cores; they must be 2:4-pruned in the weights
 *                       already (default {@link ModelSparsity#NONE})
 * @param embeddingSlots embeddings the device ring holds: at least {@code maxBatch}; the engine needs (in-flight
 *                       batches + 1) x max batch never to wait for a slot (default
 *                       {@value CudaSamBackend#DEFAULT_RING_BATCHES} x {@code maxBatch})
 * @param cuda           the {@code samstream.cuda} section: CUDA graphs of the encoder and of the mask decoder (default
 *                       {@link CudaSettings#DEFAULTS})
 * @param device         the GPU: its primary context, ordinals as CUDA_VISIBLE_DEVICES numbers them (default 0)
 */
public record CudaSamOptions(int maxBatch, int decoderThreads, int maxPromptSets, ModelSparsity sparsity,
                             int embeddingSlots, CudaSettings cuda, int device) {
    public CudaSamOptions {
        if (sparsity == null) {
            throw new IllegalArgumentException("sparsity must not be null (ModelSparsity.NONE for the dense model)");
        }
        if (cuda == null) {
            throw new IllegalArgumentException("cuda settings must not be null (CudaSettings.DEFAULTS)");
        }
    }

    /** The defaults for batches of up to {@code maxBatch} images. */
    public static CudaSamOptions of(int maxBatch) {
        return builder(maxBatch).build();
    }

    /** A builder starting from the defaults, for batches of up to {@code maxBatch} images. */
    public static Builder builder(int maxBatch) {
        return new Builder(maxBatch);
    }

    /** The defaults, changed field by field; {@link #build} makes the options. */
    public static final class Builder {
        private final int maxBatch;
        private int decoderThreads = 1;
        private int maxPromptSets = CudaSamBackend.DEFAULT_MAX_PROMPT_SETS;
        private ModelSparsity sparsity = ModelSparsity.NONE;
        private Integer embeddingSlots;
        private CudaSettings cuda = CudaSettings.DEFAULTS;
        private int device;

        private Builder(int maxBatch) {
            this.maxBatch = maxBatch;
        }

        public Builder decoderThreads(int decoderThreads) {
            this.decoderThreads = decoderThreads;
            return this;
        }

        public Builder maxPromptSets(int maxPromptSets) {
            this.maxPromptSets = maxPromptSets;
            return this;
        }

        public Builder sparsity(ModelSparsity sparsity) {
            this.sparsity = sparsity;
            return this;
        }

        public Builder embeddingSlots(int embeddingSlots) {
            this.embeddingSlots = embeddingSlots;
            return this;
        }

        public Builder cuda(CudaSettings cuda) {
            this.cuda = cuda;
            return this;
        }

        public Builder device(int device) {
            this.device = device;
            return this;
        }

        public CudaSamOptions build() {
            int slots = embeddingSlots != null ? embeddingSlots : CudaSamBackend.DEFAULT_RING_BATCHES * maxBatch;
            return new CudaSamOptions(maxBatch, decoderThreads, maxPromptSets, sparsity, slots, cuda, device);
        }
    }
}
