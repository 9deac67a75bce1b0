package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.LayerNorm;
import io.samstream.gpu.cpu.Linear;
import io.samstream.gpu.sam2.RotaryEncoding;
import io.samstream.gpu.sam2.Sdpa;

/**
 * One block of SAM 3's ViT ({@code vitdet.Block}): x + attention(norm1(x)), then x + mlp(norm2(x)). A windowed
 * block partitions the normalized map into windows (zero-padded at the right and bottom when the map is not a
 * multiple of the window), attends within each and puts them back; a global block attends over the whole map.
 * Queries and keys get the 2-D rotary encoding of their position in the window (or map), global blocks' positions
 * scaled to the window size. The MLP is fc1, exact GELU, fc2.
 */
final class VitBlock {
    private final LayerNorm norm1;
    private final LayerNorm norm2;
    private final Linear qkv;
    private final Linear proj;
    private final Linear fc1;
    private final Linear fc2;
    private final RotaryEncoding rope;
    private final int dim;
    private final int heads;
    /** Tokens a side of the attention's map: the window, or the whole map for a global block. */
    private final int side;
    private final boolean windowed;

    VitBlock(StateDict sd, String p, Sam3Config.Vision v, int index) {
        int e = v.embedDim();
        this.norm1 = LayerNorm.load(sd, p + "norm1", e, Sam3Config.NORM_EPS);
        this.norm2 = LayerNorm.load(sd, p + "norm2", e, Sam3Config.NORM_EPS);
        this.qkv = Linear.load(sd, p + "attn.qkv", e, 3 * e);
        this.proj = Linear.load(sd, p + "attn.proj", e, e);
        this.fc1 = Linear.load(sd, p + "mlp.fc1", e, v.mlpHidden());
        this.fc2 = Linear.load(sd, p + "mlp.fc2", v.mlpHidden(), e);
        this.dim = e;
        this.heads = v.heads();
        this.windowed = !v.isGlobal(index);
        this.side = windowed ? v.windowSize() : v.grid();
        // rope_interp: positions scaled by (window size) / (the block's map size)
        this.rope = new RotaryEncoding(v.headDim(), side, Sam3Config.ROPE_THETA, (double) v.windowSize() / side);
    }

    /** x [grid * grid, dim] in place. */
    void forward(CpuThreadPool pool, float[] x, int grid) {
        float[] h = norm1.apply(pool, x, grid * grid);
        float[] attended;
        if (windowed) {
            int per = (grid + side - 1) / side;
            float[] windows = partition(h, grid, per);
            float[] a = attend(pool, windows, per * per);
            attended = unpartition(a, grid, per);
        } else {
            attended = attend(pool, h, 1);
        }
        CpuOps.addInPlace(pool, x, attended, grid * grid * dim);
        float[] m = fc1.forward(pool, norm2.apply(pool, x, grid * grid), grid * grid);
        CpuOps.gelu(pool, m, m.length);
        CpuOps.addInPlace(pool, x, fc2.forward(pool, m, grid * grid), grid * grid * dim);
    }

    /** Attention within each of {@code groups} maps of side x side tokens, rows [groups * side², dim]. */
    private float[] attend(CpuThreadPool pool, float[] x, int groups) {
        int tokens = side * side;
        int rows = groups * tokens;
        float[] packed = qkv.forward(pool, x, rows);
        float[] q = new float[rows * dim];
        float[] k = new float[rows * dim];
        float[] v = new float[rows * dim];
        for (int r = 0; r < rows; r++) {
            System.arraycopy(packed, r * 3 * dim, q, r * dim, dim);
            System.arraycopy(packed, r * 3 * dim + dim, k, r * dim, dim);
            System.arraycopy(packed, r * 3 * dim + 2 * dim, v, r * dim, dim);
        }
        rope.apply(q, rows, heads);
        rope.apply(k, rows, heads);
        float[] o = Sdpa.attend(pool, q, k, v, groups, tokens, tokens, heads, dim / heads);
        return proj.forward(pool, o, rows);
    }

    /** [grid², dim] to windows [per², side², dim], zero-padded to per * side a side. */
    private float[] partition(float[] x, int grid, int per) {
        float[] out = new float[per * per * side * side * dim];
        for (int y = 0; y < grid; y++) {
            for (int xx = 0; xx < grid; xx++) {
                int w = (y / side) * per + xx / side;
                int t = (y % side) * side + xx % side;
                System.arraycopy(x, (y * grid + xx) * dim, out, (w * side * side + t) * dim, dim);
            }
        }
        return out;
    }

    private float[] unpartition(float[] windows, int grid, int per) {
        float[] out = new float[grid * grid * dim];
        for (int y = 0; y < grid; y++) {
            for (int xx = 0; xx < grid; xx++) {
                int w = (y / side) * per + xx / side;
                int t = (y % side) * side + xx % side;
                System.arraycopy(windows, (w * side * side + t) * dim, out, (y * grid + xx) * dim, dim);
            }
        }
        return out;
    }
}
