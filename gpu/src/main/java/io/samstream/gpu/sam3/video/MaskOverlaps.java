package io.samstream.gpu.sam3.video;

import io.samstream.gpu.cpu.CpuThreadPool;

/**
 * Overlap rules between the masks of one concept's objects on one frame, as Meta's video model applies them:
 * mask IoU ({@code mask_iou}), the pixel-wise non-overlap of the memory encoder's input with its shrinkage
 * suppression ({@code _suppress_object_pw_area_shrinkage}), and the object-wise non-overlap of the published masks
 * ({@code _apply_object_wise_non_overlapping_constraints}). Ties go to the first object, as torch's argmax gives.
 */
final class MaskOverlaps {
    /** A mask that keeps less than this fraction of its area under the pixel-wise rule is suppressed whole. */
    static final float SHRINK_THRESHOLD = 0.3f;
    /** The logit a suppressed pixel is clamped to ({@code clamp(max=-10)}). */
    static final float SUPPRESSED = -10f;
    /** Pixels a parallel task takes: enough to outweigh handing it out, few enough to share a frame's work. */
    static final int PIXELS_PER_TASK = 1 << 15;

    private MaskOverlaps() {}

    /** The pixels of logits above 0. */
    static boolean[] binary(float[] logits) {
        boolean[] out = new boolean[logits.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = logits[i] > 0;
        }
        return out;
    }

    static int area(boolean[] m) {
        int n = 0;
        for (boolean b : m) {
            n += b ? 1 : 0;
        }
        return n;
    }

    /**
     * {@code _apply_non_overlapping_constraints}: at each pixel only the object with the highest logit keeps its
     * value, the others are clamped to at most -10. One object is left as it is.
     */
    static float[][] pixelwise(float[][] masks) {
        float[][] out = new float[masks.length][];
        for (int k = 0; k < masks.length; k++) {
            out[k] = masks[k].clone();
        }
        if (masks.length <= 1) {
            return out;
        }
        int n = masks[0].length;
        for (int i = 0; i < n; i++) {
            int best = 0;
            for (int k = 1; k < masks.length; k++) {
                if (masks[k][i] > masks[best][i]) {
                    best = k;
                }
            }
            for (int k = 0; k < masks.length; k++) {
                if (k != best) {
                    out[k][i] = Math.min(out[k][i], SUPPRESSED);
                }
            }
        }
        return out;
    }

    /**
     * {@code _suppress_object_pw_area_shrinkage}: a mask whose area under the pixel-wise rule falls below 30 % of its
     * own is clamped to at most -10 everywhere; the others are returned as they were (they may still overlap).
     */
    static float[][] suppressShrunk(float[][] masks) {
        int[] counts = new int[2 * masks.length];
        countShrinkage(masks, 0, masks.length == 0 ? 0 : masks[0].length, counts);
        boolean[] shrunk = shrunk(counts, masks.length);
        float[][] out = new float[masks.length][];
        for (int k = 0; k < masks.length; k++) {
            out[k] = masks[k].clone();
            if (shrunk[k]) {
                for (int i = 0; i < out[k].length; i++) {
                    out[k][i] = Math.min(out[k][i], SUPPRESSED);
                }
            }
        }
        return out;
    }

    /**
     * Adds, for pixels [from, to), each mask's area before the pixel-wise rule to counts[2k] and after it to
     * counts[2k + 1]. After the rule a pixel is in mask k only when k has the highest logit there (the first of
     * equals) and that logit is above 0: the others are clamped to at most -10. One mask keeps its area.
     */
    static void countShrinkage(float[][] masks, int from, int to, int[] counts) {
        int n = masks.length;
        if (n == 0) {
            return;
        }
        for (int k = 0; k < n; k++) {
            float[] m = masks[k];
            int area = 0;
            for (int i = from; i < to; i++) {
                area += m[i] > 0 ? 1 : 0;
            }
            counts[2 * k] += area;
        }
        for (int i = from; i < to; i++) {
            int best = 0;
            float top = masks[0][i];
            for (int k = 1; k < n; k++) {
                if (masks[k][i] > top) {
                    best = k;
                    top = masks[k][i];
                }
            }
            if (top > 0) {
                counts[2 * best + 1]++;
            }
        }
    }

    /** From {@link #countShrinkage}'s areas: which of n masks keep less than {@link #SHRINK_THRESHOLD} of theirs. */
    static boolean[] shrunk(int[] counts, int n) {
        boolean[] out = new boolean[n];
        for (int k = 0; k < n; k++) {
            float ratio = (float) counts[2 * k + 1] / Math.max(counts[2 * k], 1);
            out[k] = !(ratio >= SHRINK_THRESHOLD);
        }
        return out;
    }

    /**
     * The published masks made disjoint: a pixel covered by several objects goes to the one with the highest score
     * (the first of equals).
     */
    static boolean[][] objectWise(boolean[][] masks, float[] scores) {
        boolean[][] out = new boolean[masks.length][];
        for (int k = 0; k < masks.length; k++) {
            out[k] = masks[k].clone();
        }
        if (masks.length > 1) {
            objectWise(out, scores, 0, out[0].length);
        }
        return out;
    }

    /** {@link #objectWise} in place, pixels split across the pool. */
    static void objectWise(CpuThreadPool pool, boolean[][] masks, float[] scores) {
        if (masks.length > 1) {
            pool.forRange(masks[0].length, PIXELS_PER_TASK, (from, to) -> objectWise(masks, scores, from, to));
        }
    }

    /** {@link #objectWise} in place on pixels [from, to): each pixel's owner is read before any mask changes. */
    private static void objectWise(boolean[][] masks, float[] scores, int from, int to) {
        for (int i = from; i < to; i++) {
            int best = 0;
            float bestValue = masks[0][i] ? scores[0] : 0f;
            for (int k = 1; k < masks.length; k++) {
                float v = masks[k][i] ? scores[k] : 0f;
                if (v > bestValue) {
                    best = k;
                    bestValue = v;
                }
            }
            for (int k = 0; k < masks.length; k++) {
                if (k != best || !(bestValue > 0)) {
                    masks[k][i] = false;
                }
            }
        }
    }
}
