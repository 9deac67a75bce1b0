package io.samstream.gpu.sam3.video;

/**
 * What the tracker predicts for one object on one frame from its memory ({@code track_step} without prompts, its
 * memory encoder deferred): the low-resolution mask logits [(4 grid)²] of the best of the three masks by predicted
 * IoU (all {@link Sam3TrackerModel#NO_OBJECT_SCORE} when the object score says absent), the object score logit, the
 * object pointer [hidden], and the best mask's predicted IoU.
 */
public record Propagation(float[] lowRes, float objectScore, float[] pointer, float iou) {
    /**
     * The frame's memory-selection score ({@code cal_mem_score} for one object): (2 sigmoid(score) - 1) x IoU when
     * the object score says present, else 0.
     */
    float memoryScore() {
        float norm = objectScore > 0 ? 2f * sigmoid(objectScore) - 1f : 0f;
        return norm * iou;
    }

    static float sigmoid(float x) {
        return (float) (1.0 / (1.0 + Math.exp(-x)));
    }
}
