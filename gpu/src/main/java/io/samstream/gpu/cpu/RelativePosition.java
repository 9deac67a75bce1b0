package io.samstream.gpu.cpu;

/**
 * One axis of the image encoder's decomposed relative position embedding ({@code get_rel_pos}): for a query
 * at coordinate i and a key at coordinate j along this axis, the embedding row {@code row(index(i, j))}.
 *
 * <p>Follows the reference in two less common cases: a stored table whose length is not 2*max(q, k) - 1 is
 * first resized with linear interpolation ({@code F.interpolate(mode="linear")}, align_corners=False), and
 * when q and k sizes differ the shorter side's coordinates are stretched before taking differences. The
 * coordinate arithmetic is done in fp32 and truncated, as the reference's float tensors and
 * {@code .long()} do.
 */
final class RelativePosition {
    private final float[][] rows;
    private final int[][] index;

    private RelativePosition(float[][] rows, int[][] index) {
        this.rows = rows;
        this.index = index;
    }

    /**
     * @param table  the stored rel_pos parameter [length, dim], row-major
     * @param qSize  number of query coordinates along this axis
     * @param kSize  number of key coordinates along this axis
     */
    static RelativePosition of(float[] table, int length, int dim, int qSize, int kSize) {
        if ((long) length * dim != table.length || length < 1) {
            throw new IllegalArgumentException("relative position table of " + table.length + " values is not "
                    + length + "x" + dim);
        }
        int needed = 2 * Math.max(qSize, kSize) - 1;
        float[] resized = length == needed ? table : resizeLinear(table, length, dim, needed);
        float[][] rows = new float[needed][dim];
        for (int r = 0; r < needed; r++) {
            System.arraycopy(resized, r * dim, rows[r], 0, dim);
        }
        return new RelativePosition(rows, relativeIndex(qSize, kSize));
    }

    /** The embedding row for query coordinate {@code q} and key coordinate {@code k}. */
    float[] row(int q, int k) {
        return rows[index[q][k]];
    }

    /**
     * {@code F.interpolate(t.reshape(1, length, dim).permute(0, 2, 1), size=outLength, mode="linear")}
     * transposed back: resamples each of the dim columns from length to outLength points. Source position of
     * output i: max((i + 0.5) * length / outLength - 0.5, 0) in fp32; neighbours floor and floor + 1 (clamped).
     */
    static float[] resizeLinear(float[] table, int length, int dim, int outLength) {
        float[] out = new float[outLength * dim];
        float scale = (float) length / (float) outLength;
        for (int i = 0; i < outLength; i++) {
            float src = scale * (i + 0.5f) - 0.5f;
            if (src < 0) {
                src = 0;
            }
            int i0 = Math.min((int) Math.floor(src), length - 1);
            int i1 = i0 + (i0 < length - 1 ? 1 : 0);
            float lambda1 = Math.min(Math.max(src - i0, 0f), 1f);
            float lambda0 = 1f - lambda1;
            for (int c = 0; c < dim; c++) {
                out[i * dim + c] = lambda0 * table[i0 * dim + c] + lambda1 * table[i1 * dim + c];
            }
        }
        return out;
    }

    /**
     * index[i][j] = long(i * max(k/q, 1) - j * max(q/k, 1) + (k - 1) * max(q/k, 1)), computed in fp32 like
     * the reference's float tensors; for q == k it is i - j + k - 1.
     */
    static int[][] relativeIndex(int qSize, int kSize) {
        float qScale = (float) Math.max((double) kSize / qSize, 1.0);
        float kScale = (float) Math.max((double) qSize / kSize, 1.0);
        float offset = (float) ((kSize - 1) * Math.max((double) qSize / kSize, 1.0));
        int[][] index = new int[qSize][kSize];
        for (int i = 0; i < qSize; i++) {
            float qc = (float) i * qScale;
            for (int j = 0; j < kSize; j++) {
                float kc = (float) j * kScale;
                index[i][j] = (int) ((qc - kc) + offset);
            }
        }
        return index;
    }
}
