package io.samstream.gpu.cpu;

import io.samstream.gpu.checkpoint.StateDict;

/**
 * A torch {@code nn.Conv2d} with a square kernel, computed as im2col + GEMM on channels-last data:
 * input [H, W, C] in, output [Ho, Wo, O] out. Columns are ordered (c, ky, kx), the order of the torch
 * weight [O, C, k, k] flattened, so the weight is used as a Linear [O, C*k*k] unchanged.
 */
public final class Conv2d {
    private final Linear linear;
    private final int inChannels;
    private final int kernel;
    private final int stride;
    private final int padding;

    Conv2d(Linear linear, int inChannels, int kernel, int stride, int padding) {
        if (linear.in() != inChannels * kernel * kernel) {
            throw new IllegalArgumentException("weight of " + linear.in() + " inputs for " + inChannels
                    + " channels and kernel " + kernel);
        }
        this.linear = linear;
        this.inChannels = inChannels;
        this.kernel = kernel;
        this.stride = stride;
        this.padding = padding;
    }

    /** Loads {@code name.weight} [out, in, k, k] and, when {@code withBias}, {@code name.bias} [out]. */
    public static Conv2d load(StateDict sd, String name, int in, int out, int kernel, int stride, int padding,
            boolean withBias) {
        float[] w = sd.get(name + ".weight", out, in, kernel, kernel).data();
        float[] b = withBias ? sd.get(name + ".bias", out).data().clone() : null;
        return new Conv2d(new Linear(PackedMatrix.fromOutIn(w, out, in * kernel * kernel), b), in, kernel,
                stride, padding);
    }

    public int outChannels() {
        return linear.out();
    }

    public int outSize(int inSize) {
        return (inSize + 2 * padding - kernel) / stride + 1;
    }

    /** The convolution of channels-last x [h, w, C]; returns channels-last [outSize(h), outSize(w), O]. */
    public float[] forward(CpuThreadPool pool, float[] x, int h, int w) {
        int ho = outSize(h);
        int wo = outSize(w);
        float[] cols = (kernel == 1 && stride == 1 && padding == 0) ? x : im2col(x, h, w, inChannels, kernel,
                stride, padding);
        return linear.forward(pool, cols, ho * wo);
    }

    /**
     * Unfolds channels-last x [h, w, c] into rows [ho * wo, c * k * k], one per output pixel, columns
     * ordered (c, ky, kx); taps outside the input (zero padding) are 0.
     */
    static float[] im2col(float[] x, int h, int w, int c, int k, int stride, int pad) {
        int ho = (h + 2 * pad - k) / stride + 1;
        int wo = (w + 2 * pad - k) / stride + 1;
        int rowLen = c * k * k;
        float[] cols = new float[ho * wo * rowLen];
        for (int oy = 0; oy < ho; oy++) {
            for (int ox = 0; ox < wo; ox++) {
                int row = (oy * wo + ox) * rowLen;
                for (int ky = 0; ky < k; ky++) {
                    int iy = oy * stride + ky - pad;
                    if (iy < 0 || iy >= h) {
                        continue;
                    }
                    for (int kx = 0; kx < k; kx++) {
                        int ix = ox * stride + kx - pad;
                        if (ix < 0 || ix >= w) {
                            continue;
                        }
                        int src = (iy * w + ix) * c;
                        int dst = row + ky * k + kx;
                        for (int ch = 0; ch < c; ch++) {
                            cols[dst + ch * k * k] = x[src + ch];
                        }
                    }
                }
            }
        }
        return cols;
    }
}
