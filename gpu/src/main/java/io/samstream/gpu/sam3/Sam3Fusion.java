package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;

/**
 * The seam between SAM 3's fusion encoder and the rest of the detector: {@link Sam3Model#detect} fuses the image
 * tokens with the prompt through this, on the CPU reference ({@link #cpu}, {@link FusionEncoder}) or on another
 * backend (the CUDA one, {@code io.samstream.gpu.cuda.sam3.CudaSam3FusionEncoder}). Its output is the decoder's
 * memory.
 */
public interface Sam3Fusion extends AutoCloseable {
    /** Where the layers' weights are in the detector's state_dict: layer i's under {@code LAYERS_PREFIX + i + "."}. */
    String LAYERS_PREFIX = "transformer.encoder.layers.";

    /**
     * The memory {@code [tokens, d]} of the image tokens {@code [tokens, d]} (the neck's 1x level, channels-last)
     * with their sine position {@code pos [tokens, d]}, fused with the prompt (its padded rows ignored); a device
     * backend's stays on its device for the decoder and the mask head.
     */
    FeatureMap forward(FeatureMap image, float[] pos, int tokens, Prompt prompt);

    /** Where and how it runs, for logs and masks.json (null: the CPU reference). */
    default String describe() {
        return null;
    }

    @Override
    void close();

    /** Makes a model's fusion encoder from its detector weights (Meta's key names) and its detector configuration. */
    @FunctionalInterface
    interface Factory {
        Sam3Fusion open(StateDict detectorWeights, Sam3Config.Detector detector, CpuThreadPool pool);
    }

    /**
     * Why image tokens, their position and a prompt cannot go through a fusion encoder of width {@code d}, as an
     * exception naming the input at fault; nothing when they can. A prompt must have a token that is not padding
     * (attention over keys that are all masked is undefined: torch gives NaN); the detector's always has one, the
     * geometry encoder's class token.
     */
    static void checkInputs(FeatureMap image, float[] pos, int tokens, Prompt prompt, int d) {
        if (tokens <= 0 || image.length() != (long) tokens * d || pos.length != (long) tokens * d) {
            throw new IllegalArgumentException("fusion encoder: " + tokens + " image tokens of width " + d + " need "
                    + (long) tokens * d + " values for the tokens and for their position, got " + image.length()
                    + " and " + pos.length);
        }
        if (prompt.rows().length != (long) prompt.length() * d) {
            throw new IllegalArgumentException("fusion encoder: a prompt of " + prompt.length() + " tokens of width "
                    + d + " needs " + (long) prompt.length() * d + " values, got " + prompt.rows().length);
        }
        if (prompt.validTokens() == 0) {
            throw new IllegalArgumentException("fusion encoder: every one of the prompt's " + prompt.length()
                    + " tokens is padding; the image tokens would attend to nothing");
        }
    }

    /** The fp32 CPU reference ({@link FusionEncoder}) on the model's thread pool. */
    static Factory cpu() {
        return (sd, detector, pool) -> {
            FusionEncoder encoder = new FusionEncoder(sd, detector);
            return new Sam3Fusion() {
                @Override
                public FeatureMap forward(FeatureMap image, float[] pos, int tokens, Prompt prompt) {
                    return FeatureMap.of(encoder.forward(pool, image.values(), pos, tokens, prompt));
                }

                @Override
                public void close() {}
            };
        };
    }
}
