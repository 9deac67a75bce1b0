package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.Mlp;

/**
 * The decoder's box relative position bias ({@code boxRPB="log"}): for each query box and each image row j (col i)
 * the distances of j / H to the box's top and bottom (of i / W to its left and right), scaled by 8 and squashed to
 * sign(v) log2(|v| + 1) / 3, go through a small MLP per axis to one value per head; the bias of query q on image
 * token (j, i) is the row's plus the column's. It makes each query look near its current box.
 */
final class BoxRelativeBias {
    private final Mlp mlpX;
    private final Mlp mlpY;
    private final int heads;

    BoxRelativeBias(StateDict sd, String p, int d, int heads) {
        this.mlpX = Mlp.load(sd, p + "boxRPB_embed_x", 2, d, heads, 2);
        this.mlpY = Mlp.load(sd, p + "boxRPB_embed_y", 2, d, heads, 2);
        this.heads = heads;
    }

    /** The bias [heads, n, h * w] for boxes [n, 4] (cx, cy, w, h in 0..1) over an h x w map. */
    float[] compute(CpuThreadPool pool, float[] boxes, int n, int h, int w) {
        float[] dy = new float[n * h * 2];
        float[] dx = new float[n * w * 2];
        for (int q = 0; q < n; q++) {
            float cx = boxes[4 * q];
            float cy = boxes[4 * q + 1];
            float bw = boxes[4 * q + 2];
            float bh = boxes[4 * q + 3];
            float x0 = cx - 0.5f * bw;
            float y0 = cy - 0.5f * bh;
            float x1 = cx + 0.5f * bw;
            float y1 = cy + 0.5f * bh;
            for (int j = 0; j < h; j++) {
                float c = (float) j / h;
                dy[(q * h + j) * 2] = squash(c - y0);
                dy[(q * h + j) * 2 + 1] = squash(c - y1);
            }
            for (int i = 0; i < w; i++) {
                float c = (float) i / w;
                dx[(q * w + i) * 2] = squash(c - x0);
                dx[(q * w + i) * 2 + 1] = squash(c - x1);
            }
        }
        float[] ey = mlpY.forward(pool, dy, n * h);
        float[] ex = mlpX.forward(pool, dx, n * w);
        float[] bias = new float[heads * n * h * w];
        pool.forEach(heads * n, task -> {
            int head = task / n;
            int q = task % n;
            int o = (head * n + q) * h * w;
            for (int j = 0; j < h; j++) {
                float by = ey[(q * h + j) * heads + head];
                for (int i = 0; i < w; i++) {
                    bias[o + j * w + i] = by + ex[(q * w + i) * heads + head];
                }
            }
        });
        return bias;
    }

    /** sign(8 v) log2(|8 v| + 1) / log2(8). */
    static float squash(float v) {
        float s = v * 8f;
        float mag = (float) (Math.log(Math.abs(s) + 1f) / Math.log(2.0));
        return Math.signum(s) * mag / 3f;
    }
}
