package io.samstream.gpu.sam2;

/**
 * Where a {@link Sam2Model}'s three heavy parts run when not on its own CPU code (the CUDA implementation:
 * {@code io.samstream.gpu.cuda.sam2.CudaSam2Offload}): the image encoder, the memory attention and the memory encoder,
 * each with the CPU reference's inputs and outputs. The prompt encoder, the mask decoder and the memory bank stay
 * with the model. Implementations are used by one thread at a time.
 */
public interface Sam2Offload extends AutoCloseable {
    /** {@code forward_image} of a normalized planar image [3, S, S]. */
    FrameFeatures encodeImage(float[] planarImage);

    /**
     * The memory attention: {@code top} [f*f, hidden] conditioned on {@code memory} and {@code memoryPos} [m, memDim],
     * whose last {@code pointerTokens} rows are object pointers; returns [f*f, hidden].
     */
    float[] attendMemory(float[] top, float[] memory, float[] memoryPos, int m, int pointerTokens);

    /**
     * {@code _encode_new_memory}: the memory features [f*f, memDim] of {@code pixFeat} [f*f, hidden] and the
     * decoder's low-resolution logits, binarized when {@code fromPrompt}, with the no-object embedding when
     * {@code absent}; bf16 values, as stored.
     */
    float[] encodeMemory(float[] pixFeat, float[] lowRes, boolean fromPrompt, boolean absent);

    /** What runs the parts, for logs. */
    String describe();

    @Override
    void close();
}
