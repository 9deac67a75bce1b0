package io.samstream.gpu.sparse;

/**
 * 2:4 semi-structured pruning of a Linear weight {@code [n, k]} (row-major, PyTorch's
 * {@code [out_features, in_features]}) along its reduction dimension k: in every group of four consecutive
 * k elements of a row, the two of largest magnitude are kept and the other two set to zero.
 *
 * <p>Ties are broken by position: of two equal magnitudes the lower k index is kept, so pruning is
 * deterministic and idempotent (a weight that is already 2:4 comes back unchanged: its zeros are never
 * larger than the values beside them). {@code -0.0} and {@code 0.0} count as equal. NaN weights are
 * refused, since they have no magnitude order.
 */
public final class TwoFourPruning {
    private TwoFourPruning() {}

    /** The pruned copy of {@code w} (which is left unchanged). */
    public static float[] prune(float[] w, int n, int k, String name) {
        checkShape(w, n, k, name);
        float[] out = w.clone();
        for (int g = 0; g < w.length; g += 4) {
            int keep = keptPair(w, g, name);
            for (int j = 0; j < 4; j++) {
                if (j != (keep & 3) && j != (keep >>> 2)) {
                    out[g + j] = 0f;
                }
            }
        }
        return out;
    }

    /** True when every group of four consecutive k elements of every row holds at most two non-zeros. */
    public static boolean satisfies(float[] w, int n, int k, String name) {
        checkShape(w, n, k, name);
        for (int g = 0; g < w.length; g += 4) {
            int nonZero = 0;
            for (int j = 0; j < 4; j++) {
                if (w[g + j] != 0f) {
                    nonZero++;
                }
            }
            if (nonZero > 2) {
                return false;
            }
        }
        return true;
    }

    /**
     * The two kept positions of the group starting at {@code g}, as {@code first | second << 2} with
     * {@code first < second} (the nibble the sparse tensor-core metadata uses).
     */
    static int keptPair(float[] w, int g, String name) {
        // The dropped pair is the two smallest, ties going to the higher index; keep the rest in order.
        int best = -1, second = -1;
        for (int j = 0; j < 4; j++) {
            float m = Math.abs(w[g + j]);
            if (Float.isNaN(m)) {
                throw new IllegalArgumentException(name + ": NaN weight at flat index " + (g + j)
                        + "; a NaN has no magnitude to prune by");
            }
            if (best < 0 || m > Math.abs(w[g + best])) {
                second = best;
                best = j;
            } else if (second < 0 || m > Math.abs(w[g + second])) {
                second = j;
            }
        }
        int lo = Math.min(best, second), hi = Math.max(best, second);
        return lo | hi << 2;
    }

    static void checkShape(float[] w, int n, int k, String name) {
        if (n <= 0 || k <= 0) {
            throw new IllegalArgumentException(name + ": shape [" + n + ", " + k + "] must be positive");
        }
        if (k % 4 != 0) {
            throw new IllegalArgumentException(name + ": 2:4 sparsity needs the reduction dimension (in_features) to"
                    + " be a multiple of 4, got [" + n + ", " + k + "]");
        }
        if ((long) n * k != w.length) {
            throw new IllegalArgumentException(name + ": " + w.length + " values for shape [" + n + ", " + k + "]");
        }
    }
}
