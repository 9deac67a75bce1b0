package io.samstream.gpu.predict;

import io.samstream.gpu.image.MaskPostprocessor;

/**
 * SAM's stability score ({@code calculate_stability_score}): the IoU of a mask's logits thresholded at
 * {@code threshold + offset} and at {@code threshold - offset}. The first mask lies inside the second, so
 * the IoU is the ratio of their pixel counts. A mask that hardly changes when the cut-off moves is stable.
 */
public final class StabilityScore {
    private StabilityScore() {}

    /**
     * The score of {@code length} logits from {@code start}, cut at {@link MaskPostprocessor#MASK_THRESHOLD}
     * plus or minus {@code offset}; as the reference, the float32 quotient of the two counts. 0 when both
     * masks are empty (the reference divides 0 by 0 there, NaN, which its filter drops too).
     */
    public static float of(float[] logits, int start, int length, float offset) {
        if (!(offset >= 0) || Float.isInfinite(offset)) {
            throw new IllegalArgumentException("stability offset must be finite and >= 0, got " + offset);
        }
        float high = MaskPostprocessor.MASK_THRESHOLD + offset;
        float low = MaskPostprocessor.MASK_THRESHOLD - offset;
        int inner = 0;
        int outer = 0;
        for (int i = start, end = start + length; i < end; i++) {
            float v = logits[i];
            if (v > high) {
                inner++;
            }
            if (v > low) {
                outer++;
            }
        }
        return outer == 0 ? 0f : (float) inner / (float) outer;
    }
}
