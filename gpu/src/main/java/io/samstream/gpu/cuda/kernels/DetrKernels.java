package io.samstream.gpu.cuda.kernels;

import static io.samstream.gpu.cuda.LaunchChecks.ptr;
import static io.samstream.gpu.cuda.LaunchChecks.require;
import static io.samstream.gpu.cuda.LaunchChecks.requireBf16;
import static io.samstream.gpu.cuda.LaunchChecks.requireBytes;

import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import java.util.Locale;
import jcuda.Pointer;

/**
 * SAM 3's DETR decoder around its GEMMs (detr_ops.cuh): the boxes' distances for the bias MLPs, their sine encoding,
 * narrow fp32 linears, the box update and the cross-attention with the box relative position bias. Boxes are fp32
 * {@code [n, 4]} (cx, cy, w, h in 0..1).
 */
public final class DetrKernels {
    private static final String DELTAS = "samstream_detr_box_deltas", SINE = "samstream_detr_box_sine",
            LINEAR = "samstream_detr_small_linear", UPDATE = "samstream_detr_box_update",
            ATTENTION = "samstream_detr_rpb_attention";
    private static final int THREADS = 256, ATTENTION_THREADS = 256;
    /** Query rows a CTA of {@code samstream_detr_rpb_attention} takes (detr_ops::RPB_ROWS). */
    private static final int ATTENTION_ROWS = 16;
    /** Head width the biased attention holds in registers (detr_ops::MAX_HD). */
    public static final int MAX_HEAD_DIM = 64;
    /** Columns of the rows box deltas writes (two used, the rest zero: the GEMM wants a multiple of 8). */
    public static final int DELTA_COLUMNS = 8;

    private final CudaKernels kernels;

    /** The DetrKernels of {@code kernels} (made at the first call, which looks its kernels up). */
    public static DetrKernels of(CudaKernels kernels) {
        return kernels.family(DetrKernels.class, DetrKernels::new);
    }

    private DetrKernels(CudaKernels kernels) {
        this.kernels = kernels;
        for (String name : new String[] {DELTAS, SINE, LINEAR, UPDATE}) {
            kernels.add(name, 0);
        }
        kernels.add(ATTENTION, 0);
    }

    /**
     * {@code dy [n * h, 8]} and {@code dx [n * w, 8]} (bf16): for each box and map row j (column i) the squashed
     * distances of j / h to its top and bottom (of i / w to its left and right) in columns 0 and 1, zeros after.
     */
    public void boxDeltas(CudaStream stream, DeviceBuffer boxes, DeviceBuffer dy, DeviceBuffer dx, int n, int h,
                          int w) {
        String op = String.format(Locale.ROOT, "detr boxDeltas n=%d map=%dx%d", n, h, w);
        require(n > 0 && h > 0 && w > 0, op + ": dimensions must be positive");
        requireBytes(boxes, (long) n * 16, op, "boxes");
        requireBf16(dy, (long) n * h * DELTA_COLUMNS, op, "dy");
        requireBf16(dx, (long) n * w * DELTA_COLUMNS, op, "dx");
        Pointer p = Pointer.to(ptr(boxes), ptr(dy), ptr(dx), ints(n), ints(h), ints(w));
        kernels.launch(DELTAS, grid((long) n * (h + w)), 1, 1, THREADS, 0, stream, p, op);
    }

    /** {@code out [n, 2d]} (bf16): the sine encoding of the boxes, blocks y, x, w, h of d / 2 channels. */
    public void boxSine(CudaStream stream, DeviceBuffer boxes, DeviceBuffer out, int n, int d) {
        String op = String.format(Locale.ROOT, "detr boxSine n=%d d=%d", n, d);
        require(n > 0 && d > 0 && d % 2 == 0, op + ": n positive, d positive and even");
        requireBytes(boxes, (long) n * 16, op, "boxes");
        requireBf16(out, (long) n * 2 * d, op, "out");
        Pointer p = Pointer.to(ptr(boxes), ptr(out), ints(n), ints(d));
        kernels.launch(SINE, grid((long) n * 2 * d), 1, 1, THREADS, 0, stream, p, op);
    }

    /** {@code y [rows, o] = x [rows, k] · w [o, k]ᵀ + b [o]}: bf16 x, fp32 weights, bias and result. */
    public void smallLinear(CudaStream stream, DeviceBuffer x, DeviceBuffer w, DeviceBuffer b, DeviceBuffer y,
                            int rows, int k, int o) {
        String op = String.format(Locale.ROOT, "detr smallLinear rows=%d k=%d o=%d", rows, k, o);
        require(rows > 0 && k > 0 && o > 0, op + ": dimensions must be positive");
        requireBf16(x, (long) rows * k, op, "x");
        requireBytes(w, (long) o * k * 4, op, "w");
        requireBytes(b, (long) o * 4, op, "b");
        requireBytes(y, (long) rows * o * 4, op, "y");
        Pointer p = Pointer.to(ptr(x), ptr(w), ptr(b), ptr(y), ints(rows), ints(k), ints(o));
        kernels.launch(LINEAR, grid((long) rows * o * 32), 1, 1, THREADS, 0, stream, p, op);
    }

    /** {@code boxes = sigmoid(delta + inverse_sigmoid(boxes))} for fp32 {@code boxes} and {@code delta [n, 4]}. */
    public void boxUpdate(CudaStream stream, DeviceBuffer boxes, DeviceBuffer delta, int n) {
        String op = "detr boxUpdate n=" + n;
        require(n > 0, op + ": n must be positive");
        requireBytes(boxes, (long) n * 16, op, "boxes");
        requireBytes(delta, (long) n * 16, op, "delta");
        Pointer p = Pointer.to(ptr(boxes), ptr(delta), ints(n));
        kernels.launch(UPDATE, grid(4L * n), 1, 1, THREADS, 0, stream, p, op);
    }

    /**
     * {@code out [rows, d]}: per head, softmax(q kᵀ · scale + bias) v over the {@code h * w} keys of the memory
     * (bf16 q {@code [rows, d]}, k and v {@code [h * w, d]}); the bias of row r ≥ 1 on key (j, i) is
     * {@code ey[(r - 1) * h + j][head] + ex[(r - 1) * w + i][head]} (bf16 rows of {@code ld} columns), row 0's zero.
     */
    public void rpbAttention(CudaStream stream, DeviceBuffer q, DeviceBuffer k, DeviceBuffer v, DeviceBuffer ey,
                             DeviceBuffer ex, int ld, DeviceBuffer out, int rows, int d, int heads, int h, int w,
                             float scale) {
        String op = String.format(Locale.ROOT, "detr rpbAttention rows=%d d=%d heads=%d map=%dx%d", rows, d, heads,
                h, w);
        require(rows > 1 && d > 0 && heads > 0 && h > 0 && w > 0, op + ": dimensions must be positive");
        require(d % heads == 0 && d / heads <= MAX_HEAD_DIM, op + ": head width at most " + MAX_HEAD_DIM);
        require(ld >= heads && rows <= 65535 && heads <= 65535, op + ": bias rows of at least one column a head");
        requireBf16(q, (long) rows * d, op, "q");
        requireBf16(k, (long) h * w * d, op, "k");
        requireBf16(v, (long) h * w * d, op, "v");
        requireBf16(ey, (long) (rows - 1) * h * ld, op, "ey");
        requireBf16(ex, (long) (rows - 1) * w * ld, op, "ex");
        requireBf16(out, (long) rows * d, op, "out");
        Pointer p = Pointer.to(ptr(q), ptr(k), ptr(v), ptr(ey), ptr(ex), ints(ld), ptr(out), ints(rows), ints(d),
                ints(d / heads), ints(h), ints(w), Pointer.to(new float[] {scale}));
        kernels.launch(ATTENTION, (rows + ATTENTION_ROWS - 1) / ATTENTION_ROWS, heads, 1, ATTENTION_THREADS, 0, stream,
                p, op);
    }

    private static Pointer ints(int v) {
        return Pointer.to(new int[] {v});
    }

    private int grid(long threads) {
        long ctas = (threads + THREADS - 1) / THREADS;
        long cap = (long) kernels.context().info().multiprocessors() * 16;
        return (int) Math.max(1, Math.min(ctas, cap));
    }
}
