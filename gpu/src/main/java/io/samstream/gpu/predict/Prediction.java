package io.samstream.gpu.predict;

import io.samstream.gpu.tensor.Tensor;

/**
 * Masks for one prompt set, as the reference {@code SamPredictor.predict} returns them.
 *
 * @param masks          N binary masks at the original image size, each row-major {@code height * width}
 * @param width          original image width
 * @param height         original image height
 * @param iouPredictions the model's quality estimate per mask, {@code [N]}
 * @param lowResLogits   mask logits {@code [N, L, L]} before upscaling (L = 256 for the released models)
 */
public record Prediction(boolean[][] masks, int width, int height, float[] iouPredictions, Tensor lowResLogits) {
    public int count() {
        return masks.length;
    }
}
