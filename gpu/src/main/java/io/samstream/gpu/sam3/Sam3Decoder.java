package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;

/**
 * The seam between SAM 3's DETR decoder and the rest of the detector: {@link Sam3Model#detect} turns the encoder's
 * memory into queries, boxes and presence through this, on the CPU reference ({@link #cpu}, {@link DetrDecoder}) or
 * on another backend (the CUDA one, {@code io.samstream.gpu.cuda.sam3.CudaSam3Decoder}).
 */
public interface Sam3Decoder extends AutoCloseable {
    /** Where its weights are in the detector's state_dict. */
    String PREFIX = "transformer.decoder.";

    /**
     * What the decoder gives.
     *
     * @param queries  the last layer's normalized queries [n, d] ({@code hs[-1]})
     * @param boxes    the refined boxes [n, 4], (cx, cy, w, h) in 0..1
     * @param presence the presence logit
     */
    record Output(float[] queries, float[] boxes, float presence) {}

    /**
     * The decoder over the encoder's {@code memory [grid², d]} with its sine position {@code memoryPos [grid², d]},
     * its queries attending to {@code prompt} (its padded rows ignored).
     */
    Output forward(FeatureMap memory, float[] memoryPos, int grid, Prompt prompt);

    /** Where and how it runs, for logs and masks.json (null: the CPU reference). */
    default String describe() {
        return null;
    }

    @Override
    void close();

    /** Makes a model's decoder from its detector weights (Meta's key names) and its detector configuration. */
    @FunctionalInterface
    interface Factory {
        Sam3Decoder open(StateDict detectorWeights, Sam3Config.Detector detector, CpuThreadPool pool);
    }

    /** The fp32 CPU reference ({@link DetrDecoder}) on the model's thread pool. */
    static Factory cpu() {
        return (sd, detector, pool) -> {
            DetrDecoder decoder = new DetrDecoder(sd, detector);
            return new Sam3Decoder() {
                @Override
                public Output forward(FeatureMap memory, float[] memoryPos, int grid, Prompt prompt) {
                    return decoder.forward(pool, memory.values(), memoryPos, grid, prompt);
                }

                @Override
                public void close() {}
            };
        };
    }
}
