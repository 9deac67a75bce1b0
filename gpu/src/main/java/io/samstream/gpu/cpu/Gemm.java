package io.samstream.gpu.cpu;

/**
 * C[M, N] = A[M, K] · B[K, N] (+ bias[N]) in fp32, blocked for the caches and split over the thread pool.
 *
 * <p>A task computes a block of {@link #ROW_BLOCK} rows times one panel of B, accumulating over K in
 * blocks of {@link #K_BLOCK} (the B block then stays in L2 while the rows of the block reuse it) into a
 * small tile. The inner loop adds four rank-1 updates per pass over a tile row, with the same index into
 * every array so that HotSpot vectorizes it. (Eight updates per pass were fast on some runs and several
 * times slower on others, depending on where the arrays landed in memory; four were fast every time:
 * bench/results/code-comment-figures.md.) Block sizes are constants, so the summation order, and
 * with it every result bit, is the same for any thread count.
 */
public final class Gemm {
    private Gemm() {}

    static final int ROW_BLOCK = 64;
    static final int K_BLOCK = 256;

    /**
     * Writes A·B (+ bias) into {@code c}.
     *
     * @param a    row-major [m, K], K = b.rows()
     * @param bias [N] added to every row, or null
     * @param c    row-major [m, N], overwritten; must not be {@code a}
     */
    public static void multiply(CpuThreadPool pool, float[] a, int m, PackedMatrix b, float[] bias, float[] c) {
        int k = b.rows();
        int n = b.cols();
        if ((long) m * k > a.length || (long) m * n > c.length) {
            throw new IllegalArgumentException("GEMM operands too small: A " + a.length + " for " + m + "x" + k
                    + ", C " + c.length + " for " + m + "x" + n);
        }
        if (bias != null && bias.length != n) {
            throw new IllegalArgumentException("bias of " + bias.length + " for " + n + " outputs");
        }
        int rowBlocks = (m + ROW_BLOCK - 1) / ROW_BLOCK;
        int panels = b.panelCount();
        // Consecutive tasks share a panel, so its blocks are often still in cache.
        pool.forEach(rowBlocks * panels, t -> block(a, b, bias, c, m, k, n, t % rowBlocks, t / rowBlocks));
    }

    /*
     * One task. HotSpot 17's vectorizer proved fragile on this code (see the class comment); this shape,
     * the whole loop nest in one method and the tail on its own induction variable, was fast each time.
     */
    private static void block(float[] a, PackedMatrix b, float[] bias, float[] c, int m, int kTotal, int n,
            int rowBlock, int p) {
        float[][] panel = b.panel(p);
        int width = panel[0].length;
        int j0 = p * PackedMatrix.PANEL;
        int r0 = rowBlock * ROW_BLOCK;
        int r1 = Math.min(m, r0 + ROW_BLOCK);
        float[][] tile = new float[r1 - r0][width];
        for (int k0 = 0; k0 < kTotal; k0 += K_BLOCK) {
            int k1 = Math.min(kTotal, k0 + K_BLOCK);
            int kMain = k0 + ((k1 - k0) & ~3);
            for (int r = r0; r < r1; r++) {
                float[] acc = tile[r - r0];
                int aRow = r * kTotal;
                // acc += sum over k of a[r, k] * B[k, panel columns], four rank-1 updates per pass.
                for (int k = k0; k < kMain; k += 4) {
                    float a0 = a[aRow + k];
                    float a1 = a[aRow + k + 1];
                    float a2 = a[aRow + k + 2];
                    float a3 = a[aRow + k + 3];
                    float[] b0 = panel[k];
                    float[] b1 = panel[k + 1];
                    float[] b2 = panel[k + 2];
                    float[] b3 = panel[k + 3];
                    for (int j = 0; j < width; j++) {
                        acc[j] += a0 * b0[j] + a1 * b1[j] + a2 * b2[j] + a3 * b3[j];
                    }
                }
                // A separate induction variable for the tail keeps the main loop in the vectorizer's shape.
                for (int k = kMain; k < k1; k++) {
                    float av = a[aRow + k];
                    float[] bk = panel[k];
                    for (int j = 0; j < width; j++) {
                        acc[j] += av * bk[j];
                    }
                }
            }
        }
        for (int r = r0; r < r1; r++) {
            float[] acc = tile[r - r0];
            int out = r * n + j0;
            if (bias == null) {
                System.arraycopy(acc, 0, c, out, width);
            } else {
                for (int j = 0; j < width; j++) {
                    c[out + j] = acc[j] + bias[j0 + j];
                }
            }
        }
    }
}
