package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.LayerNorm;
import io.samstream.gpu.cpu.Linear;

/**
 * One Hiera {@code MultiScaleBlock}: x = shortcut + attn(norm1(x)) in windows (zero-padded to whole windows,
 * or one window of the whole map when the block attends globally), then x = x + mlp(norm2(x)) (GELU).
 *
 * <p>The first block of a stage doubles the width and halves the map: its shortcut is proj(norm1(x)) max-pooled
 * 2x2, and its queries are max-pooled 2x2 inside each window, so each window shrinks to half its side.
 */
final class HieraBlock {
    private static final double EPS = 1e-6;

    private final int dim;
    private final int dimOut;
    private final int heads;
    private final int window;
    private final boolean pool;
    private final LayerNorm norm1;
    private final Linear qkv;
    private final Linear attnProj;
    private final LayerNorm norm2;
    private final Linear mlp0;
    private final Linear mlp1;
    private final Linear proj;

    HieraBlock(StateDict sd, String p, int dim, int dimOut, int heads, int window, boolean pool) {
        this.dim = dim;
        this.dimOut = dimOut;
        this.heads = heads;
        this.window = window;
        this.pool = pool;
        this.norm1 = LayerNorm.load(sd, p + "norm1", dim, EPS);
        this.qkv = Linear.load(sd, p + "attn.qkv", dim, 3 * dimOut);
        this.attnProj = Linear.load(sd, p + "attn.proj", dimOut, dimOut);
        this.norm2 = LayerNorm.load(sd, p + "norm2", dimOut, EPS);
        this.mlp0 = Linear.load(sd, p + "mlp.layers.0", dimOut, 4 * dimOut);
        this.mlp1 = Linear.load(sd, p + "mlp.layers.1", 4 * dimOut, dimOut);
        this.proj = dim != dimOut ? Linear.load(sd, p + "proj", dim, dimOut) : null;
    }

    int dimOut() {
        return dimOut;
    }

    boolean pools() {
        return pool;
    }

    /** x channels-last [h, w, dim]; returns [h', w', dimOut] with h' = h/2 when this block pools. */
    float[] forward(CpuThreadPool threads, float[] x, int h, int w) {
        int n = h * w;
        float[] xn = norm1.apply(threads, x, n);
        int oh = pool ? h / 2 : h;
        int ow = pool ? w / 2 : w;
        float[] shortcut = x;
        if (proj != null) {
            shortcut = proj.forward(threads, xn, n);
            if (pool) {
                shortcut = Resampling.maxPool2x2(shortcut, h, w, dimOut);
            }
        }
        // window partition (a global block: one window of the whole map)
        int wsH = window > 0 ? window : h;
        int wsW = window > 0 ? window : w;
        int nwH = (h + wsH - 1) / wsH;
        int nwW = (w + wsW - 1) / wsW;
        int nWin = nwH * nwW;
        int tokens = wsH * wsW;
        float[] windows = new float[nWin * tokens * dim];
        for (int wy = 0; wy < nwH; wy++) {
            for (int wx = 0; wx < nwW; wx++) {
                int base = (wy * nwW + wx) * tokens;
                for (int ty = 0; ty < wsH; ty++) {
                    int y = wy * wsH + ty;
                    for (int tx = 0; tx < wsW; tx++) {
                        int xx = wx * wsW + tx;
                        if (y < h && xx < w) {
                            System.arraycopy(xn, (y * w + xx) * dim, windows, (base + ty * wsW + tx) * dim, dim);
                        }
                    }
                }
            }
        }
        float[] all = qkv.forward(threads, windows, nWin * tokens);
        float[] q = new float[nWin * tokens * dimOut];
        float[] k = new float[nWin * tokens * dimOut];
        float[] v = new float[nWin * tokens * dimOut];
        for (int t = 0; t < nWin * tokens; t++) {
            System.arraycopy(all, t * 3 * dimOut, q, t * dimOut, dimOut);
            System.arraycopy(all, t * 3 * dimOut + dimOut, k, t * dimOut, dimOut);
            System.arraycopy(all, t * 3 * dimOut + 2 * dimOut, v, t * dimOut, dimOut);
        }
        int qH = wsH;
        int qW = wsW;
        if (pool) {
            qH = wsH / 2;
            qW = wsW / 2;
            float[] pooled = new float[nWin * qH * qW * dimOut];
            int perWin = tokens * dimOut;
            for (int b = 0; b < nWin; b++) {
                float[] one = new float[perWin];
                System.arraycopy(q, b * perWin, one, 0, perWin);
                System.arraycopy(Resampling.maxPool2x2(one, wsH, wsW, dimOut), 0, pooled, b * qH * qW * dimOut,
                        qH * qW * dimOut);
            }
            q = pooled;
        }
        int nq = qH * qW;
        float[] attn = Sdpa.attend(threads, q, k, v, nWin, nq, tokens, heads, dimOut / heads);
        attn = attnProj.forward(threads, attn, nWin * nq);
        // reverse the partition, dropping the padding; add to the shortcut
        float[] out = shortcut == x ? x.clone() : shortcut;
        for (int wy = 0; wy < nwH; wy++) {
            for (int wx = 0; wx < nwW; wx++) {
                int base = (wy * nwW + wx) * nq;
                for (int ty = 0; ty < qH; ty++) {
                    int y = wy * qH + ty;
                    if (y >= oh) {
                        continue;
                    }
                    for (int tx = 0; tx < qW; tx++) {
                        int xx = wx * qW + tx;
                        if (xx >= ow) {
                            continue;
                        }
                        int src = (base + ty * qW + tx) * dimOut;
                        int dst = (y * ow + xx) * dimOut;
                        for (int c = 0; c < dimOut; c++) {
                            out[dst + c] += attn[src + c];
                        }
                    }
                }
            }
        }
        int m = oh * ow;
        float[] hidden = mlp0.forward(threads, norm2.apply(threads, out, m), m);
        CpuOps.gelu(threads, hidden, hidden.length);
        CpuOps.addInPlace(threads, out, mlp1.forward(threads, hidden, m), m * dimOut);
        return out;
    }
}
