package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;

/**
 * SAM 3's fusion encoder ({@code TransformerEncoderFusion} as built for the image model): the image tokens (the
 * neck's 1x level) attend to themselves with their sine position on queries and keys, and to the prompt tokens
 * (the phrase's rows, then the geometry encoder's) with padding masked. Its output is the decoder's memory.
 */
final class FusionEncoder {
    private final EncoderLayer[] layers;
    private final int d;

    FusionEncoder(StateDict sd, Sam3Config.Detector c) {
        this.d = c.dModel();
        this.layers = new EncoderLayer[c.encoderLayers()];
        for (int i = 0; i < layers.length; i++) {
            layers[i] = new EncoderLayer(sd, Sam3Fusion.LAYERS_PREFIX + i + ".", d, c.heads(), c.encoderFfn(),
                    true);
        }
    }

    /** The memory [tokens, d] of image tokens [tokens, d] fused with the prompt [promptLength, d]. */
    float[] forward(CpuThreadPool pool, float[] image, float[] pos, int tokens, Prompt prompt) {
        Sam3Fusion.checkInputs(FeatureMap.of(image), pos, tokens, prompt, d);
        float[] x = image.clone();
        for (EncoderLayer layer : layers) {
            layer.forward(pool, x, tokens, pos, null, prompt.rows(), prompt.rows(), prompt.length(),
                    prompt.padding());
        }
        return x;
    }
}
