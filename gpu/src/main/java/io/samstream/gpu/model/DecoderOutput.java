package io.samstream.gpu.model;

import io.samstream.gpu.tensor.Tensor;

/**
 * What the mask decoder returns for one prompt set: N = 3 masks with multimask output, else 1.
 *
 * @param lowResLogits mask logits {@code [N, L, L]}, L = {@link SamConfig#lowResSize()}
 * @param iouPredictions the IoU head's estimate of each mask's quality, {@code [N]}
 */
public record DecoderOutput(Tensor lowResLogits, float[] iouPredictions) {
    public int count() {
        return iouPredictions.length;
    }
}
