package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.image.RgbImage;

/**
 * The seam between SAM 3's image trunk (the ViT) and the rest of the model: {@link Sam3Model} runs its trunk
 * through this, on the CPU reference ({@link #cpu}) or on another backend (the CUDA trunk,
 * {@code io.samstream.gpu.cuda.sam3.CudaSam3Vit}); the necks, text encoder, detector and mask head stay on the CPU.
 */
public interface Sam3Trunk extends AutoCloseable {
    /**
     * The trunk's map {@code [grid * grid, embed]} (channels-last) of a normalized model input {@code [3, size, size]};
     * a device backend's stays on its device for the necks.
     */
    FeatureMap forward(float[] chw);

    /**
     * {@link #forward(float[])} of an 8-bit image of any size, pre-processed for an input of {@code size} a side
     * ({@link Sam3Preprocessor#modelInput}; a device backend does that on its device).
     */
    default FeatureMap forward(RgbImage image, int size) {
        return forward(Sam3Preprocessor.modelInput(image, size));
    }

    /** Where and how the trunk runs, for logs and masks.json (null: the CPU reference). */
    default String describe() {
        return null;
    }

    @Override
    void close();

    /** Makes a model's trunk from its detector weights (Meta's key names) and its vision configuration. */
    @FunctionalInterface
    interface Factory {
        Sam3Trunk open(StateDict detectorWeights, Sam3Config.Vision vision, CpuThreadPool pool);
    }

    /** The fp32 CPU reference ({@link Vit}) on the model's thread pool. */
    static Factory cpu() {
        return (sd, vision, pool) -> {
            Vit vit = new Vit(sd, vision);
            int s = vision.imageSize();
            return new Sam3Trunk() {
                @Override
                public FeatureMap forward(float[] chw) {
                    return FeatureMap.of(vit.forward(pool, channelsLast(chw, s)));
                }

                @Override
                public void close() {}
            };
        };
    }

    /** A planar {@code [3, s, s]} image as channels-last {@code [s, s, 3]}. */
    static float[] channelsLast(float[] chw, int s) {
        if (chw.length != 3 * s * s) {
            throw new IllegalArgumentException("model input of " + chw.length + " values; " + s + " x " + s
                    + " x 3 expected");
        }
        float[] hwc = new float[chw.length];
        for (int c = 0; c < 3; c++) {
            for (int i = 0; i < s * s; i++) {
                hwc[i * 3 + c] = chw[c * s * s + i];
            }
        }
        return hwc;
    }
}
