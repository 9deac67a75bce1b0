package io.samstream.gpu.cpu;

import io.samstream.gpu.checkpoint.StateDict;

/**
 * A torch {@code nn.LayerNorm} over the last dimension, or SAM's {@code LayerNorm2d} over the channels of
 * channels-last data (same arithmetic). The eps differs by place: 1e-6 in the image encoder (its norm
 * layer is built with eps=1e-6) and in every LayerNorm2d, torch's default 1e-5 in the mask decoder.
 */
public final class LayerNorm {
    public static final double ENCODER_EPS = 1e-6;
    public static final double LAYER_NORM_2D_EPS = 1e-6;
    public static final double DECODER_EPS = 1e-5;

    private final float[] weight;
    private final float[] bias;
    private final double eps;

    public LayerNorm(float[] weight, float[] bias, double eps) {
        if (weight.length != bias.length) {
            throw new IllegalArgumentException("LayerNorm weight " + weight.length + " and bias " + bias.length);
        }
        this.weight = weight;
        this.bias = bias;
        this.eps = eps;
    }

    public static LayerNorm load(StateDict sd, String name, int dim, double eps) {
        return new LayerNorm(sd.get(name + ".weight", dim).data().clone(),
                sd.get(name + ".bias", dim).data().clone(), eps);
    }

    int dim() {
        return weight.length;
    }

    /** Normalizes each of the {@code rows} rows of x into y (may be x). */
    public void apply(CpuThreadPool pool, float[] x, int rows, float[] y) {
        CpuOps.layerNorm(pool, x, rows, weight.length, weight, bias, eps, y);
    }

    public float[] apply(CpuThreadPool pool, float[] x, int rows) {
        float[] y = new float[rows * weight.length];
        apply(pool, x, rows, y);
        return y;
    }
}
