package io.samstream.gpu.cpu;

import io.samstream.gpu.checkpoint.CheckpointException;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.tensor.Tensor;

/**
 * The image encoder's multi-head attention with decomposed relative position bias, over windows of the
 * token grid or over the whole grid (global blocks).
 *
 * <p>Per window and head: softmax((q * scale)·kᵀ + rel_h + rel_w)·v with scale = head_dim^-0.5, where
 * rel_h[i, kh] = q_i · Rh[qh(i), kh] and rel_w[i, kw] = q_i · Rw[qw(i), kw] use the unscaled q.
 *
 * <p>Instead of copying tokens into padded windows, the qkv projection runs on the real tokens only and
 * padded tokens take the projection of a zero vector, which is exactly the qkv bias; they take part as keys
 * and values as in the reference. Padded queries are skipped, since the reference crops their outputs away.
 * Work is split into tasks of (window, head, block of queries), so no more than a block of scores
 * [QUERY_BLOCK, tokens per window] exists per thread, even for global attention over 64x64 tokens.
 */
final class EncoderAttention {
    static final int QUERY_BLOCK = 64;

    private final Linear qkv;
    private final float[] qkvBias;
    private final Linear proj;
    private final int dim;
    private final int heads;
    private final int headDim;
    private final float scale;
    private final WindowGrid grid;
    private final RelativePosition relH;
    private final RelativePosition relW;

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    EncoderAttention(float[] qkvWeight, float[] qkvBias, float[] projWeight, float[] projBias, int dim,
            int heads, WindowGrid grid, float[] relPosH, int relPosHLength, float[] relPosW, int relPosWLength) {
        if (dim % heads != 0) {
            throw new IllegalArgumentException(heads + " heads do not divide width " + dim);
        }
        this.qkv = new Linear(PackedMatrix.fromOutIn(qkvWeight, 3 * dim, dim), qkvBias.clone());
        this.qkvBias = qkvBias.clone();
        this.proj = new Linear(PackedMatrix.fromOutIn(projWeight, dim, dim), projBias.clone());
        this.dim = dim;
        this.heads = heads;
        this.headDim = dim / heads;
        this.scale = (float) Math.pow(headDim, -0.5);
        this.grid = grid;
        int side = grid.windowSize();
        this.relH = RelativePosition.of(relPosH, relPosHLength, headDim, side, side);
        this.relW = RelativePosition.of(relPosW, relPosWLength, headDim, side, side);
    }

    /** Loads {@code prefix.qkv}, {@code prefix.proj}, {@code prefix.rel_pos_h} and {@code prefix.rel_pos_w}. */
    static EncoderAttention load(StateDict sd, String prefix, int dim, int heads, WindowGrid grid) {
        int headDim = dim / heads;
        Tensor relH = relPos(sd, prefix + ".rel_pos_h", headDim);
        Tensor relW = relPos(sd, prefix + ".rel_pos_w", headDim);
        return new EncoderAttention(sd.get(prefix + ".qkv.weight", 3 * dim, dim).data(),
                sd.get(prefix + ".qkv.bias", 3 * dim).data(), sd.get(prefix + ".proj.weight", dim, dim).data(),
                sd.get(prefix + ".proj.bias", dim).data(), dim, heads, grid, relH.data(), relH.dim(0),
                relW.data(), relW.dim(0));
    }

    /** Any table length is accepted (the reference interpolates one that does not fit); the width is fixed. */
    private static Tensor relPos(StateDict sd, String key, int headDim) {
        Tensor t = sd.get(key);
        if (t.rank() != 2 || t.dim(1) != headDim || t.dim(0) < 1) {
            throw new CheckpointException(sd.source(), "tensor " + key + " has shape " + t.shapeString()
                    + " where [L, " + headDim + "] was expected");
        }
        return t;
    }

    /**
     * Attention of the normalized tokens x [h*w, dim] (the grid this attention was built for), projected:
     * returns proj(attention) [h*w, dim], to be added to the residual.
     */
    float[] forward(CpuThreadPool pool, float[] x, int tokens) {
        float[] qkvOut = qkv.forward(pool, x, tokens);
        float[] attended = new float[tokens * dim];
        int queryBlocks = (grid.tokensPerWindow() + QUERY_BLOCK - 1) / QUERY_BLOCK;
        int perWindow = heads * queryBlocks;
        pool.forEach(grid.windowCount() * perWindow, t -> {
            int window = t / perWindow;
            int head = (t % perWindow) / queryBlocks;
            int block = t % queryBlocks;
            attendBlock(qkvOut, window, head, block, attended);
        });
        return proj.forward(pool, attended, tokens);
    }

    private void attendBlock(float[] qkvOut, int window, int head, int block, float[] out) {
        int side = grid.windowSize();
        int keys = grid.tokensPerWindow();
        Scratch s = SCRATCH.get();
        s.ensure(keys, headDim, side);
        int qOff = head * headDim;
        int kOff = dim + head * headDim;
        int vOff = 2 * dim + head * headDim;
        int stride = 3 * dim;

        // Gather this head's keys (transposed) and values for the window; padding is the bias.
        for (int pos = 0; pos < keys; pos++) {
            int token = grid.tokenAt(window, pos);
            float[] src = token >= 0 ? qkvOut : qkvBias;
            int base = token >= 0 ? token * stride : 0;
            float[] v = s.values[pos];
            for (int d = 0; d < headDim; d++) {
                s.keysT[d][pos] = src[base + kOff + d];
                v[d] = src[base + vOff + d];
            }
        }

        int first = block * QUERY_BLOCK;
        int last = Math.min(keys, first + QUERY_BLOCK);
        float[] scores = s.scores;
        for (int pos = first; pos < last; pos++) {
            int token = grid.tokenAt(window, pos);
            if (token < 0) {
                continue;
            }
            int qBase = token * stride + qOff;
            for (int d = 0; d < headDim; d++) {
                s.q[d] = qkvOut[qBase + d];
                s.qScaled[d] = s.q[d] * scale;
            }
            scores(s, keys);
            addRelativePosition(s, pos / side, pos % side, side);
            CpuOps.softmax(scores, 0, keys);
            weightedValues(s, keys);
            System.arraycopy(s.o, 0, out, token * dim + qOff, headDim);
        }
    }

    /** scores[t] = qScaled · k_t, as rank-1 updates over the transposed keys (vectorizable). */
    private void scores(Scratch s, int keys) {
        float[] sc = s.scores;
        java.util.Arrays.fill(sc, 0, keys, 0f);
        float[] qs = s.qScaled;
        int d = 0;
        for (; d + 3 < headDim; d += 4) {
            float q0 = qs[d];
            float q1 = qs[d + 1];
            float q2 = qs[d + 2];
            float q3 = qs[d + 3];
            float[] k0 = s.keysT[d];
            float[] k1 = s.keysT[d + 1];
            float[] k2 = s.keysT[d + 2];
            float[] k3 = s.keysT[d + 3];
            for (int t = 0; t < keys; t++) {
                sc[t] += q0 * k0[t] + q1 * k1[t] + q2 * k2[t] + q3 * k3[t];
            }
        }
        for (; d < headDim; d++) {
            float q0 = qs[d];
            float[] k0 = s.keysT[d];
            for (int t = 0; t < keys; t++) {
                sc[t] += q0 * k0[t];
            }
        }
    }

    /** scores[kh * side + kw] += rel_h[kh], then += rel_w[kw] (the reference's order of additions). */
    private void addRelativePosition(Scratch s, int qh, int qw, int side) {
        for (int k = 0; k < side; k++) {
            s.relHRow[k] = dot(s.q, relH.row(qh, k));
            s.relWRow[k] = dot(s.q, relW.row(qw, k));
        }
        float[] sc = s.scores;
        for (int kh = 0; kh < side; kh++) {
            float rh = s.relHRow[kh];
            int row = kh * side;
            for (int kw = 0; kw < side; kw++) {
                sc[row + kw] = (sc[row + kw] + rh) + s.relWRow[kw];
            }
        }
    }

    private float dot(float[] a, float[] b) {
        double acc = 0;
        for (int d = 0; d < headDim; d++) {
            acc += (double) a[d] * b[d];
        }
        return (float) acc;
    }

    /** o = sum_t p_t v_t over the softmaxed scores. */
    private void weightedValues(Scratch s, int keys) {
        float[] o = s.o;
        java.util.Arrays.fill(o, 0, headDim, 0f);
        float[] p = s.scores;
        int t = 0;
        for (; t + 3 < keys; t += 4) {
            float p0 = p[t];
            float p1 = p[t + 1];
            float p2 = p[t + 2];
            float p3 = p[t + 3];
            float[] v0 = s.values[t];
            float[] v1 = s.values[t + 1];
            float[] v2 = s.values[t + 2];
            float[] v3 = s.values[t + 3];
            for (int d = 0; d < headDim; d++) {
                o[d] += p0 * v0[d] + p1 * v1[d] + p2 * v2[d] + p3 * v3[d];
            }
        }
        for (; t < keys; t++) {
            float p0 = p[t];
            float[] v0 = s.values[t];
            for (int d = 0; d < headDim; d++) {
                o[d] += p0 * v0[d];
            }
        }
    }

    /** Per-thread buffers, grown on demand and reused across calls. */
    private static final class Scratch {
        float[][] keysT = new float[0][0];
        float[][] values = new float[0][0];
        float[] scores = new float[0];
        float[] q = new float[0];
        float[] qScaled = new float[0];
        float[] o = new float[0];
        float[] relHRow = new float[0];
        float[] relWRow = new float[0];

        void ensure(int keys, int headDim, int side) {
            if (keysT.length != headDim || keysT[0].length < keys) {
                keysT = new float[headDim][keys];
            }
            if (values.length < keys || values[0].length != headDim) {
                values = new float[keys][headDim];
            }
            if (scores.length < keys) {
                scores = new float[keys];
            }
            if (q.length != headDim) {
                q = new float[headDim];
                qScaled = new float[headDim];
                o = new float[headDim];
            }
            if (relHRow.length < side) {
                relHRow = new float[side];
                relWRow = new float[side];
            }
        }
    }
}
