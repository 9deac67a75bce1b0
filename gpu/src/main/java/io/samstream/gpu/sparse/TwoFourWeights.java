package io.samstream.gpu.sparse;

/**
 * A 2:4-sparse Linear weight {@code W [n, k]} in the compressed form of the sparse tensor-core instruction
 * {@code mma.sp.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32} (sm_80 and later), which the sparse GEMM
 * ({@code gemm_sparse.cuh}) feeds with W as the sparse "A" operand: its rows are the instruction's M
 * rows, its k the instruction's K.
 *
 * <h2>Values</h2>
 * {@link #values()} is {@code [rowsPadded, kPadded / 2]} row-major: for row r and group c of four k
 * elements ({@code k = 4c .. 4c+3}), the two kept values in increasing k order at columns {@code 2c} and
 * {@code 2c+1}. This is the "packed" A of the PTX ISA's sparse matrix storage; a 16 x 32 block of W becomes
 * a 16 x 16 block of values whose fragment layout equals that of a dense m16n8k16 A operand, so the kernel
 * loads it with plain {@code ldmatrix}.
 *
 * <h2>Metadata</h2>
 * Each group of four contributes a 4-bit code {@code i0 | i1 << 2}: the positions (0..3) of its two kept
 * values, {@code i0 < i1} (codes 0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b1110; the PTX ISA forbids
 * 0b0000, 0b0101, 0b1010, 0b1111). Sixteen k (four groups) of one row make 16 bits, group {@code c} at bits
 * {@code 4c .. 4c+3}. For m16n8k32 with bf16 and sparsity selector 0, in every quad of lanes the lanes with
 * {@code lane % 4 = t}, t in {0, 1}, supply the metadata register; with {@code g = lane / 4}:
 * <pre>
 *   bits  0..15: row g,     k = 16t .. 16t+15 of the k32 step
 *   bits 16..31: row g + 8, k = 16t .. 16t+15
 * </pre>
 * {@link #metadata()} stores exactly those registers, {@code [rowsPadded / 16][kPadded / 32][16]} 32-bit
 * words, word {@code 2g + t} of a (16-row block, k32 step) being the register of lanes {@code 4g + t}:
 * a warp reads the 64 bytes of one step with one 4-byte load per lane (lanes with t = 2, 3 load a
 * neighbour's word, which the instruction ignores).
 *
 * <h2>Padding</h2>
 * Rows are padded to a multiple of 16 (one metadata block), k to a multiple of 64 (the kernel's K step),
 * with zero values and the valid code 0b0100, so the kernel never meets an invalid metadata word.
 */
public final class TwoFourWeights {
    /** Rows per metadata block (the m16 of the instruction) and k per metadata step (its k32). */
    public static final int ROW_BLOCK = 16, K_STEP = 32, K_ALIGN = 64;
    /** The code of padding groups: positions 0 and 1. */
    static final int PAD_CODE = 0b0100;

    private final int n, k, rowsPadded, kPadded;
    private final float[] values;
    private final int[] metadata;

    private TwoFourWeights(int n, int k, float[] values, int[] metadata) {
        this.n = n;
        this.k = k;
        this.rowsPadded = roundUp(n, ROW_BLOCK);
        this.kPadded = roundUp(k, K_ALIGN);
        this.values = values;
        this.metadata = metadata;
    }

    /**
     * Compresses a weight that already is 2:4 ({@link TwoFourPruning#prune}); a group with more than two
     * non-zeros is an error naming the weight, the row and the k range.
     */
    public static TwoFourWeights compress(float[] pruned, int n, int k, String name) {
        TwoFourPruning.checkShape(pruned, n, k, name);
        int rowsPadded = roundUp(n, ROW_BLOCK), kPadded = roundUp(k, K_ALIGN);
        int half = kPadded / 2;
        float[] values = new float[rowsPadded * half];
        int steps = kPadded / K_STEP;
        int[] metadata = new int[rowsPadded / ROW_BLOCK * steps * 16];
        for (int r = 0; r < rowsPadded; r++) {
            for (int c = 0; c < kPadded / 4; c++) {
                int code = PAD_CODE;
                if (r < n && 4 * c < k) {
                    int g0 = r * k + 4 * c;
                    int nonZero = 0;
                    for (int j = 0; j < 4; j++) {
                        if (pruned[g0 + j] != 0f) {
                            nonZero++;
                        }
                    }
                    if (nonZero > 2) {
                        throw new IllegalArgumentException(name + ": row " + r + ", k " + 4 * c + ".." + (4 * c + 3)
                                + " has " + nonZero + " non-zeros; prune to 2:4 first");
                    }
                    code = TwoFourPruning.keptPair(pruned, g0, name);
                    values[r * half + 2 * c] = pruned[g0 + (code & 3)];
                    values[r * half + 2 * c + 1] = pruned[g0 + (code >>> 2)];
                }
                metadata[wordIndex(r, c, steps)] |= code << shift(r, c);
            }
        }
        return new TwoFourWeights(n, k, values, metadata);
    }

    /**
     * The dense {@code [n, k]} weight this form stands for, decoded the way the tensor cores read it: the
     * reference decoder of the layout above (tests round-trip through it). Invalid codes are an error.
     */
    public float[] decompress() {
        int half = kPadded / 2, steps = kPadded / K_STEP;
        float[] dense = new float[n * k];
        for (int r = 0; r < n; r++) {
            for (int c = 0; c < k / 4; c++) {
                int code = (metadata[wordIndex(r, c, steps)] >>> shift(r, c)) & 0xF;
                int i0 = code & 3, i1 = code >>> 2;
                if (i0 >= i1) {
                    throw new IllegalStateException("invalid metadata code 0b" + Integer.toBinaryString(code) + " at row "
                            + r + ", k " + 4 * c);
                }
                dense[r * k + 4 * c + i0] = values[r * half + 2 * c];
                dense[r * k + 4 * c + i1] = values[r * half + 2 * c + 1];
            }
        }
        return dense;
    }

    /** The metadata word holding group {@code c} (k = 4c..4c+3) of row {@code r}. */
    static int wordIndex(int r, int c, int steps) {
        int block = r / ROW_BLOCK, g = r % 8;
        int step = c / 8, t = (c % 8) / 4;   // 8 groups per k32 step, 4 per lane's 16 bits
        return (block * steps + step) * 16 + 2 * g + t;
    }

    /** Bit position of group {@code c} of row {@code r} inside its word. */
    static int shift(int r, int c) {
        return ((r % ROW_BLOCK) >= 8 ? 16 : 0) + 4 * (c % 4);
    }

    private static int roundUp(int v, int m) {
        return (v + m - 1) / m * m;
    }

    public int rows() {
        return n;
    }

    public int k() {
        return k;
    }

    public int rowsPadded() {
        return rowsPadded;
    }

    public int kPadded() {
        return kPadded;
    }

    /** {@code [rowsPadded, kPadded / 2]} kept values (fp32; the GPU uploads them as bf16). Not a copy. */
    public float[] values() {
        return values;
    }

    /** {@code [rowsPadded / 16][kPadded / 32][16]} metadata registers. Not a copy. */
    public int[] metadata() {
        return metadata;
    }
}
