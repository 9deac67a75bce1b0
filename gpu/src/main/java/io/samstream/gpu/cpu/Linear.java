package io.samstream.gpu.cpu;

import io.samstream.gpu.checkpoint.StateDict;

/** A torch {@code nn.Linear} (or a convolution seen as one): y = x·Wᵀ + b on the rows of x. */
public final class Linear {
    private final PackedMatrix weight;
    private final float[] bias;

    public Linear(PackedMatrix weight, float[] bias) {
        if (bias != null && bias.length != weight.cols()) {
            throw new IllegalArgumentException("bias of " + bias.length + " for " + weight.cols() + " outputs");
        }
        this.weight = weight;
        this.bias = bias;
    }

    /** Loads {@code name.weight} [out, in] and {@code name.bias} [out]. */
    public static Linear load(StateDict sd, String name, int in, int out) {
        float[] w = sd.get(name + ".weight", out, in).data();
        float[] b = sd.get(name + ".bias", out).data();
        return new Linear(PackedMatrix.fromOutIn(w, out, in), b.clone());
    }

    public int in() {
        return weight.rows();
    }

    public int out() {
        return weight.cols();
    }

    /** y [rows, out] for x [rows, in]. */
    public float[] forward(CpuThreadPool pool, float[] x, int rows) {
        float[] y = new float[rows * out()];
        forward(pool, x, rows, y);
        return y;
    }

    public void forward(CpuThreadPool pool, float[] x, int rows, float[] y) {
        Gemm.multiply(pool, x, rows, weight, bias, y);
    }
}
