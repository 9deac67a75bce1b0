package io.samstream.gpu.fp8;

/**
 * A matrix {@code [rows, cols]} in e4m3 with one fp32 scale per row: element {@code (r, c)} stands for
 * {@code decode(values[r * cols + c]) * scales[r]}. The form of the FP8 GEMM's operands: activations quantized per
 * token by the kernels of fp8_quant.cuh, Linear weights {@code [out, in]} per output channel at load
 * ({@link #quantizeWeight}); {@link #quantize} is the kernels' arithmetic, byte for byte:
 * <pre>
 *   amax  = max(max_c |x[r, c]|, 1e-12)
 *   scale = amax / 448
 *   q     = e4m3(x * (448 / amax))        (each step one fp32 operation, rounded to nearest even)
 * </pre>
 */
public record Fp8Rows(byte[] values, float[] scales, int rows, int cols) {
    /** The smallest row maximum a scale is made from: a row of zeros gets bytes 0 and a tiny, finite scale. */
    public static final float MIN_AMAX = 1e-12f;

    public Fp8Rows {
        if (rows < 1 || cols < 1 || values.length != (long) rows * cols || scales.length != rows) {
            throw new IllegalArgumentException("Fp8Rows: " + values.length + " values and " + scales.length
                    + " scales for " + rows + " x " + cols);
        }
    }

    /** {@code x [rows, cols]} quantized per row, as the kernels do. */
    public static Fp8Rows quantize(float[] x, int rows, int cols) {
        if (rows < 1 || cols < 1 || x.length != (long) rows * cols) {
            throw new IllegalArgumentException("quantize: " + x.length + " values for " + rows + " x " + cols);
        }
        byte[] q = new byte[x.length];
        float[] scales = new float[rows];
        for (int r = 0; r < rows; r++) {
            int base = r * cols;
            float amax = 0f;
            for (int c = 0; c < cols; c++) {
                amax = Math.max(amax, Math.abs(x[base + c]));
            }
            amax = Math.max(amax, MIN_AMAX);
            float inv = E4m3.MAX / amax;
            for (int c = 0; c < cols; c++) {
                q[base + c] = E4m3.encode(x[base + c] * inv);
            }
            scales[r] = amax / E4m3.MAX;
        }
        return new Fp8Rows(q, scales, rows, cols);
    }

    /**
     * A Linear weight {@code [out, in]} with one scale per output channel (row). A non-finite weight is an error naming
     * {@code what}: it would poison its channel's scale.
     */
    public static Fp8Rows quantizeWeight(float[] w, int out, int in, String what) {
        for (int i = 0; i < w.length; i++) {
            if (!Float.isFinite(w[i])) {
                throw new IllegalArgumentException(what + ": weight [" + i / in + ", " + i % in + "] is " + w[i]
                        + "; FP8 needs finite weights");
            }
        }
        return quantize(w, out, in);
    }

    /** Element {@code (r, c)} as the value it stands for. */
    public float value(int r, int c) {
        return E4m3.decode(values[r * cols + c]) * scales[r];
    }

    /** All elements as the values they stand for, row-major. */
    public float[] dequantize() {
        float[] x = new float[values.length];
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < cols; c++) {
                x[r * cols + c] = value(r, c);
            }
        }
        return x;
    }
}
