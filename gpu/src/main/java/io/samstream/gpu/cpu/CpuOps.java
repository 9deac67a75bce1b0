package io.samstream.gpu.cpu;

/**
 * The element-wise and row-wise kernels of SAM in fp32: LayerNorm, GELU, ReLU, softmax, residual adds.
 * Statistics and transcendental functions are computed in double and rounded once, which keeps them at
 * least as accurate as PyTorch's fp32 kernels.
 */
public final class CpuOps {
    private CpuOps() {}

    /** Rows per task for cheap row-wise kernels. */
    private static final int ROW_GRAIN = 64;
    /** Elements per task for element-wise kernels. */
    private static final int ELEMENT_GRAIN = 1 << 16;

    /**
     * LayerNorm over the last dimension of x [rows, dim]: (x - mean) / sqrt(var + eps) * weight + bias with
     * the biased variance. Also LayerNorm2d on channels-last data (normalizing over channels per pixel is
     * the same computation). May run in place (x == y).
     */
    public static void layerNorm(CpuThreadPool pool, float[] x, int rows, int dim, float[] weight, float[] bias,
            double eps, float[] y) {
        pool.forRange(rows, ROW_GRAIN, (r0, r1) -> {
            for (int r = r0; r < r1; r++) {
                layerNormRow(x, r * dim, dim, weight, bias, eps, y);
            }
        });
    }

    static void layerNormRow(float[] x, int off, int dim, float[] weight, float[] bias, double eps, float[] y) {
        double sum = 0;
        for (int i = 0; i < dim; i++) {
            sum += x[off + i];
        }
        double mean = sum / dim;
        double sq = 0;
        for (int i = 0; i < dim; i++) {
            double d = x[off + i] - mean;
            sq += d * d;
        }
        double invStd = 1.0 / Math.sqrt(sq / dim + eps);
        for (int i = 0; i < dim; i++) {
            y[off + i] = (float) ((x[off + i] - mean) * invStd * weight[i] + bias[i]);
        }
    }

    /** The exact (erf) GELU of {@code nn.GELU()}, in place on x[0, n). */
    public static void gelu(CpuThreadPool pool, float[] x, int n) {
        pool.forRange(n, ELEMENT_GRAIN, (i0, i1) -> {
            for (int i = i0; i < i1; i++) {
                x[i] = Erf.gelu(x[i]);
            }
        });
    }

    /** max(x, 0) in place on x[0, n). */
    public static void relu(float[] x, int n) {
        for (int i = 0; i < n; i++) {
            if (x[i] < 0) {
                x[i] = 0f;
            }
        }
    }

    /** acc[i] += x[i] for i in [0, n). */
    public static void addInPlace(CpuThreadPool pool, float[] acc, float[] x, int n) {
        pool.forRange(n, ELEMENT_GRAIN, (i0, i1) -> {
            for (int i = i0; i < i1; i++) {
                acc[i] += x[i];
            }
        });
    }

    /** out[i] = a[i] + b[i] for i in [0, n). */
    public static float[] add(float[] a, float[] b, int n) {
        float[] out = new float[n];
        for (int i = 0; i < n; i++) {
            out[i] = a[i] + b[i];
        }
        return out;
    }

    /** Softmax of x[off, off + n) in place: exp(x - max) / sum. */
    public static void softmax(float[] x, int off, int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            max = Math.max(max, x[off + i]);
        }
        double sum = 0;
        for (int i = 0; i < n; i++) {
            double e = Math.exp(x[off + i] - max);
            x[off + i] = (float) e;
            sum += e;
        }
        double inv = 1.0 / sum;
        for (int i = 0; i < n; i++) {
            x[off + i] = (float) (x[off + i] * inv);
        }
    }
}
