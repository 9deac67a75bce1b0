package io.samstream.gpu.model;

import io.samstream.gpu.tensor.Tensor;

/**
 * {@link EmbeddingMatcher} on the host: the reference, and what the CPU backend uses. Each cell's channel vector
 * is normalised once per frame, so a shift's score is a mean of dot products. About 50 M multiply-adds per frame
 * for SAM's 64 x 64 x 256 embedding at range 3.
 */
public final class HostEmbeddingMatcher implements EmbeddingMatcher {
    private final int range;
    /** The previous embedding's cells, channels-last and normalised; its cols and rows. */
    private float[] previous;
    private int previousCols;
    private int previousRows;

    public HostEmbeddingMatcher(int range) {
        if (range < 1) {
            throw new IllegalArgumentException("an embedding matcher needs a range of at least 1 cell, got " + range);
        }
        this.range = range;
    }

    @Override
    public int range() {
        return range;
    }

    @Override
    public double[] match(ImageEmbedding embedding, int cols, int rows) {
        Tensor t = embedding.toTensor();
        int[] s = t.shape();
        if (s.length != 4 || s[0] != 1 || s[2] != s[3]) {
            throw new IllegalArgumentException("matching needs one square embedding [1, C, E, E], got "
                    + t.shapeString());
        }
        int c = s[1];
        int e = s[2];
        if (cols < 1 || rows < 1 || cols > e || rows > e) {
            throw new IllegalArgumentException("matching " + cols + "x" + rows + " image cells of a " + e + "x" + e
                    + " embedding");
        }
        float[] now = normalisedCells(t.data(), c, e, cols, rows);
        float[] before = previous;
        boolean sameSize = previousCols == cols && previousRows == rows && before != null
                && before.length == now.length;
        previous = now;
        previousCols = cols;
        previousRows = rows;
        return sameSize ? scores(before, now, c, cols, rows, range) : null;
    }

    /** The first cols x rows cells of {@code [C, E, E]} data as unit vectors, channels-last (zero stays zero). */
    private static float[] normalisedCells(float[] d, int c, int e, int cols, int rows) {
        float[] out = new float[cols * rows * c];
        for (int y = 0; y < rows; y++) {
            for (int x = 0; x < cols; x++) {
                int o = (y * cols + x) * c;
                double n = 0;
                for (int k = 0; k < c; k++) {
                    float v = d[k * e * e + y * e + x];
                    out[o + k] = v;
                    n += (double) v * v;
                }
                float inv = n > 0 ? (float) (1 / Math.sqrt(n)) : 0;
                for (int k = 0; k < c; k++) {
                    out[o + k] *= inv;
                }
            }
        }
        return out;
    }

    /** The mean cosines of {@link #match} from two sets of normalised cells. */
    static double[] scores(float[] before, float[] now, int c, int cols, int rows, int range) {
        int w = 2 * range + 1;
        double[] out = new double[w * w];
        for (int dy = -range; dy <= range; dy++) {
            for (int dx = -range; dx <= range; dx++) {
                double sum = 0;
                long count = 0;
                for (int y = Math.max(0, -dy); y < Math.min(rows, rows - dy); y++) {
                    for (int x = Math.max(0, -dx); x < Math.min(cols, cols - dx); x++) {
                        int a = (y * cols + x) * c;
                        int b = ((y + dy) * cols + x + dx) * c;
                        float dot = 0;
                        for (int k = 0; k < c; k++) {
                            dot += before[a + k] * now[b + k];
                        }
                        sum += dot;
                        count++;
                    }
                }
                out[(dy + range) * w + dx + range] = count > 0 ? sum / count : 0;
            }
        }
        return out;
    }

    @Override
    public void close() {
        previous = null;
    }
}
