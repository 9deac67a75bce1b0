package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.LayerNorm;
import io.samstream.gpu.cpu.Linear;

/**
 * The memory fuser's ConvNeXt block ({@code CXBlock}): x + gamma * pwconv2(GELU(pwconv1(LayerNorm2d(dwconv(x))))),
 * dwconv a depthwise k x k convolution with zero padding k/2.
 */
final class CxBlock {
    private final int dim;
    private final int kernel;
    private final float[] dwWeight;
    private final float[] dwBias;
    private final LayerNorm norm;
    private final Linear pw1;
    private final Linear pw2;
    private final float[] gamma;

    CxBlock(StateDict sd, String p, int dim, int kernel) {
        this.dim = dim;
        this.kernel = kernel;
        this.dwWeight = sd.get(p + "dwconv.weight", dim, 1, kernel, kernel).data().clone();
        this.dwBias = sd.get(p + "dwconv.bias", dim).data().clone();
        this.norm = LayerNorm.load(sd, p + "norm", dim, LayerNorm.LAYER_NORM_2D_EPS);
        this.pw1 = Linear.load(sd, p + "pwconv1", dim, 4 * dim);
        this.pw2 = Linear.load(sd, p + "pwconv2", 4 * dim, dim);
        this.gamma = sd.get(p + "gamma", dim).data().clone();
    }

    /** x channels-last [h, w, dim], updated in place. */
    void forward(CpuThreadPool pool, float[] x, int h, int w) {
        float[] y = depthwise(pool, x, h, w);
        int n = h * w;
        norm.apply(pool, y, n, y);
        float[] hidden = pw1.forward(pool, y, n);
        CpuOps.gelu(pool, hidden, hidden.length);
        float[] z = pw2.forward(pool, hidden, n);
        for (int i = 0; i < n; i++) {
            for (int c = 0; c < dim; c++) {
                x[i * dim + c] += gamma[c] * z[i * dim + c];
            }
        }
    }

    float[] depthwise(CpuThreadPool pool, float[] x, int h, int w) {
        int pad = kernel / 2;
        float[] y = new float[x.length];
        pool.forRange(h, 4, (y0, y1) -> {
            float[] acc = new float[dim];
            for (int oy = y0; oy < y1; oy++) {
                for (int ox = 0; ox < w; ox++) {
                    System.arraycopy(dwBias, 0, acc, 0, dim);
                    for (int ky = 0; ky < kernel; ky++) {
                        int iy = oy + ky - pad;
                        if (iy < 0 || iy >= h) {
                            continue;
                        }
                        for (int kx = 0; kx < kernel; kx++) {
                            int ix = ox + kx - pad;
                            if (ix < 0 || ix >= w) {
                                continue;
                            }
                            int src = (iy * w + ix) * dim;
                            int tap = ky * kernel + kx;
                            for (int c = 0; c < dim; c++) {
                                acc[c] += x[src + c] * dwWeight[c * kernel * kernel + tap];
                            }
                        }
                    }
                    System.arraycopy(acc, 0, y, (oy * w + ox) * dim, dim);
                }
            }
        });
        return y;
    }
}
