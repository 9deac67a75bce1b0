package io.samstream.gpu.model;

import io.samstream.gpu.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * A way to run SAM: the CPU fp32 reference, or CUDA. Both take model-ready tensors; resizing,
 * coordinate transforms and mask post-processing live in {@code SamPredictor}, shared by all backends.
 */
public interface SamBackend extends AutoCloseable {
    SamConfig config();

    /** A short name for logs, e.g. "cpu (8 threads)". */
    String name();

    /**
     * Runs the image encoder.
     *
     * @param images normalized, padded images {@code [B, 3, S, S]}, S = {@link SamConfig#imageSize()}
     * @return image embeddings {@code [B, C, E, E]}, C = prompt dim, E = {@link SamConfig#embeddingSize()}
     */
    Tensor encode(Tensor images);

    /**
     * Runs the prompt encoder and mask decoder for one image.
     *
     * @param embedding the image's embedding {@code [1, C, E, E]}
     * @param prompt    the prompt set, in model input coordinates
     * @param multimask true for the 3 multimask outputs, false for the single-mask output
     */
    DecoderOutput decode(Tensor embedding, Prompt prompt, boolean multimask);

    /**
     * Runs the prompt encoder and mask decoder for several prompt sets of one image (object tracks,
     * the point grid of automatic discovery). Backends that can batch (CUDA) override it; the default
     * decodes one prompt set after the other.
     *
     * @return one output per prompt set, in order
     */
    default List<DecoderOutput> decodeBatch(Tensor embedding, List<Prompt> prompts, boolean multimask) {
        List<DecoderOutput> out = new ArrayList<>(prompts.size());
        for (Prompt p : prompts) {
            out.add(decode(embedding, p, multimask));
        }
        return out;
    }

    @Override
    default void close() {}
}
