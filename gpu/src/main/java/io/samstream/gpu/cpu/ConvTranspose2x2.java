package io.samstream.gpu.cpu;

import io.samstream.gpu.checkpoint.StateDict;

/**
 * A torch {@code nn.ConvTranspose2d(in, out, kernel_size=2, stride=2)} on channels-last data: every input
 * pixel owns its own 2x2 output block, out[2y+dy, 2x+dx, o] = bias[o] + sum_i in[y, x, i] W[i, o, dy, dx].
 * That is one GEMM with the weight [in, out*2*2] as stored, then a scatter of each row into its block.
 */
public final class ConvTranspose2x2 {
    private final PackedMatrix weight;
    /** bias[o] repeated for the four (dy, dx) columns of output channel o. */
    private final float[] expandedBias;
    private final int outChannels;

    ConvTranspose2x2(float[] weight, float[] bias, int in, int out) {
        this.weight = PackedMatrix.fromInOut(weight, in, out * 4);
        this.outChannels = out;
        this.expandedBias = new float[out * 4];
        for (int o = 0; o < out; o++) {
            for (int t = 0; t < 4; t++) {
                expandedBias[o * 4 + t] = bias[o];
            }
        }
    }

    /** Loads {@code name.weight} [in, out, 2, 2] and {@code name.bias} [out]. */
    public static ConvTranspose2x2 load(StateDict sd, String name, int in, int out) {
        float[] w = sd.get(name + ".weight", in, out, 2, 2).data();
        float[] b = sd.get(name + ".bias", out).data();
        return new ConvTranspose2x2(w, b, in, out);
    }

    int outChannels() {
        return outChannels;
    }

    /** x channels-last [h, w, in] to channels-last [2h, 2w, out]. */
    public float[] forward(CpuThreadPool pool, float[] x, int h, int w) {
        int groups = outChannels * 4;
        float[] perPixel = new float[h * w * groups];
        Gemm.multiply(pool, x, h * w, weight, expandedBias, perPixel);
        float[] y = new float[4 * h * w * outChannels];
        int ow = 2 * w;
        pool.forRange(h, 8, (y0, y1) -> {
            for (int iy = y0; iy < y1; iy++) {
                for (int ix = 0; ix < w; ix++) {
                    int src = (iy * w + ix) * groups;
                    for (int o = 0; o < outChannels; o++) {
                        for (int dy = 0; dy < 2; dy++) {
                            for (int dx = 0; dx < 2; dx++) {
                                y[((2 * iy + dy) * ow + 2 * ix + dx) * outChannels + o] =
                                        perPixel[src + o * 4 + dy * 2 + dx];
                            }
                        }
                    }
                }
            }
        });
        return y;
    }
}
