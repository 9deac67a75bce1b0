package io.samstream.gpu.cpu;

/**
 * The right-hand matrix B [K, N] of a GEMM, re-laid-out once for {@link Gemm}: column panels of at most
 * {@link #PANEL} columns, each held as K separate rows of the panel's width.
 *
 * <p>Why this shape: the GEMM's inner loop runs over the columns of one panel with the same index into the
 * accumulator row and into every B row it reads, which is the form HotSpot's auto-vectorizer accepts (it
 * gives up when two arrays are read at different offsets, since they might be the same array).
 */
public final class PackedMatrix {
    static final int PANEL = 256;

    private final int rows;
    private final int cols;
    /** panels[p][k] = B[k, p*PANEL .. p*PANEL + width(p)). */
    private final float[][][] panels;

    private PackedMatrix(int rows, int cols) {
        if (rows <= 0 || cols <= 0) {
            throw new IllegalArgumentException("empty matrix " + rows + "x" + cols);
        }
        this.rows = rows;
        this.cols = cols;
        int count = (cols + PANEL - 1) / PANEL;
        this.panels = new float[count][][];
        for (int p = 0; p < count; p++) {
            panels[p] = new float[rows][Math.min(PANEL, cols - p * PANEL)];
        }
    }

    /**
     * B = Wᵀ for a torch {@code nn.Linear} weight W [out, in] (also a conv weight [out, in, kh, kw] seen as
     * [out, in*kh*kw]): then x·B is the layer applied to the rows of x.
     */
    public static PackedMatrix fromOutIn(float[] w, int out, int in) {
        checkLength(w, out, in);
        PackedMatrix m = new PackedMatrix(in, out);
        for (int j = 0; j < out; j++) {
            float[][] panel = m.panels[j / PANEL];
            int jj = j % PANEL;
            for (int k = 0; k < in; k++) {
                panel[k][jj] = w[j * in + k];
            }
        }
        return m;
    }

    /** B = W for a matrix already laid out [in, out] (a ConvTranspose2d weight [in, out, kh, kw]). */
    public static PackedMatrix fromInOut(float[] w, int in, int out) {
        checkLength(w, in, out);
        PackedMatrix m = new PackedMatrix(in, out);
        for (int p = 0; p < m.panels.length; p++) {
            float[][] panel = m.panels[p];
            for (int k = 0; k < in; k++) {
                System.arraycopy(w, k * out + p * PANEL, panel[k], 0, panel[k].length);
            }
        }
        return m;
    }

    private static void checkLength(float[] w, int a, int b) {
        if ((long) a * b != w.length) {
            throw new IllegalArgumentException(w.length + " values cannot be a " + a + "x" + b + " matrix");
        }
    }

    /** K: the length of the dot products. */
    public int rows() {
        return rows;
    }

    /** N: the number of outputs per input row. */
    public int cols() {
        return cols;
    }

    int panelCount() {
        return panels.length;
    }

    float[][] panel(int p) {
        return panels[p];
    }
}
