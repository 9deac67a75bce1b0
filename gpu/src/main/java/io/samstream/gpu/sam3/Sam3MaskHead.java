package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;

/**
 * The seam between SAM 3's mask head and the rest of the detector: {@link Sam3Model#masks} gets the mask logits of
 * chosen queries through this, on the CPU reference ({@link #cpu}, {@link MaskHead}) or on another backend (the CUDA
 * one, {@code io.samstream.gpu.cuda.sam3.CudaSam3MaskHead}). What crosses it is the pixel decoder's work (the memory
 * attending to the prompt, upsampled onto the image's 2x and 4x levels, per-pixel embeddings) and the dot products
 * of the queries' mask embeddings with those pixels; the small MLP making the embeddings stays with the model.
 */
public interface Sam3MaskHead extends AutoCloseable {
    /** Where its weights are in the detector's state_dict. */
    String PREFIX = "segmentation_head.";
    /** GroupNorm's groups in the pixel decoder. */
    int GROUPS = 8;

    /**
     * Mask logits {@code [n, (4 grid)²]} at 4x the ViT's grid of {@code n} queries' mask embeddings
     * {@code [n, d]}, for the encoder's {@code memory [grid², d]} of {@code image} and {@code prompt}.
     */
    float[] masks(FeatureMap memory, VisionFeatures image, Prompt prompt, float[] embeddings, int n);

    /** Where and how it runs, for logs and masks.json (null: the CPU reference). */
    default String describe() {
        return null;
    }

    @Override
    void close();

    /** Makes a model's mask head from its detector weights (Meta's key names) and its detector configuration. */
    @FunctionalInterface
    interface Factory {
        Sam3MaskHead open(StateDict detectorWeights, Sam3Config.Detector detector, CpuThreadPool pool);
    }

    /** The fp32 CPU reference ({@link MaskHead}) on the model's thread pool. */
    static Factory cpu() {
        return (sd, detector, pool) -> {
            MaskHead head = new MaskHead(sd, detector);
            return new Sam3MaskHead() {
                @Override
                public float[] masks(FeatureMap memory, VisionFeatures image, Prompt prompt, float[] embeddings, int n) {
                    return head.masks(pool, embeddings, n, head.pixelEmbeddings(pool, memory.values(), image, prompt));
                }

                @Override
                public void close() {}
            };
        };
    }
}
