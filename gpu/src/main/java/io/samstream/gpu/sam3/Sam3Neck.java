package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;

/**
 * The seam between SAM 3's ViT trunk and what reads its map through a neck ({@code Sam3DualViTDetNeck}): the
 * detector's levels ({@link #DETECTOR}) and, in the video model's checkpoint, the tracker's ({@link #TRACKER}). A
 * {@link Sam3Model} runs both through this, on the CPU reference ({@link #cpu}, {@link DualNeck}) or on another
 * backend (the CUDA one, {@code io.samstream.gpu.cuda.sam3.CudaSam3Neck}).
 */
public interface Sam3Neck extends AutoCloseable {
    /** The detector's neck: its weights' prefix in the detector's state_dict. */
    String DETECTOR = "backbone.vision_backbone.convs.";
    /** The tracker's neck of the video model ({@code add_sam2_neck}): its weights' prefix. */
    String TRACKER = "backbone.vision_backbone.sam2_convs.";

    /**
     * The levels at 4x, 2x and 1x the grid, channels-last {@code [(4 grid)², d]}, {@code [(2 grid)², d]},
     * {@code [grid², d]}, of the trunk's map {@code [grid², embed]}; a device backend's stay on its device.
     */
    FeatureMap[] forward(FeatureMap trunk);

    /** Where and how it runs, for logs and masks.json (null: the CPU reference). */
    default String describe() {
        return null;
    }

    @Override
    void close();

    /** Makes the neck whose weights are under {@code prefix} ({@link #DETECTOR} or {@link #TRACKER}). */
    @FunctionalInterface
    interface Factory {
        Sam3Neck open(StateDict detectorWeights, String prefix, Sam3Config config, CpuThreadPool pool);
    }

    /** The fp32 CPU reference ({@link DualNeck}) on the model's thread pool. */
    static Factory cpu() {
        return (sd, prefix, config, pool) -> {
            DualNeck neck = new DualNeck(sd, config.vision().embedDim(), config.detector().dModel(), prefix);
            int grid = config.vision().grid();
            return new Sam3Neck() {
                @Override
                public FeatureMap[] forward(FeatureMap trunk) {
                    return FeatureMap.of(neck.forward(pool, trunk.values(), grid));
                }

                @Override
                public void close() {}
            };
        };
    }
}
