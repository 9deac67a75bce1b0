package io.samstream.bench.track;

/**
 * J of DAVIS: the region similarity of a predicted mask and a ground-truth mask, their intersection over
 * their union. Both empty (the object is absent and nothing was predicted) counts 1, as in DAVIS's
 * {@code db_eval_iou}; exactly one empty counts 0.
 */
public final class RegionJaccard {
    private RegionJaccard() {}

    /** Masks are row-major, of the same size. */
    public static double of(boolean[] predicted, boolean[] truth) {
        if (predicted.length != truth.length) {
            throw new IllegalArgumentException("masks of " + predicted.length + " and " + truth.length
                    + " pixels cannot be compared");
        }
        long intersection = 0;
        long union = 0;
        for (int p = 0; p < truth.length; p++) {
            if (predicted[p] && truth[p]) {
                intersection++;
            }
            if (predicted[p] || truth[p]) {
                union++;
            }
        }
        return union == 0 ? 1.0 : (double) intersection / union;
    }
}
