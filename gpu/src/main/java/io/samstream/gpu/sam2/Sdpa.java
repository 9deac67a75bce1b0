package io.samstream.gpu.sam2;

import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.Gemm;
import io.samstream.gpu.cpu.PackedMatrix;

/**
 * Scaled dot-product attention ({@code F.scaled_dot_product_attention}, no mask, no dropout) over a batch of
 * independent groups (windows) and heads: softmax(q·kᵀ / sqrt(d))·v.
 *
 * <p>Layout: q [batch, nq, heads*d], k and v [batch, nk, heads*d], out like q. Each (group, head) first gets its
 * keys transposed and its values gathered once; tasks then run over (group, head, block of 32 queries), so the
 * result does not depend on the thread count. Large single groups (the memory attention: thousands of queries
 * over tens of thousands of keys) go through the blocked GEMM instead, 256 queries at a time.
 */
public final class Sdpa {
    private Sdpa() {}

    private static final int QUERY_BLOCK = 32;
    /** Multiply-adds per (group, head) above which the GEMM path is taken. */
    static final long GEMM_WORK = 1L << 26;
    private static final int GEMM_ROWS = 256;

    public static float[] attend(CpuThreadPool pool, float[] q, float[] k, float[] v, int batch, int nq, int nk,
            int heads, int d) {
        if ((long) nq * nk * d >= GEMM_WORK) {
            return attendByGemm(pool, q, k, v, batch, nq, nk, heads, d);
        }
        return attendDirect(pool, q, k, v, batch, nq, nk, heads, d);
    }

    /** softmax(q·kᵀ/sqrt(d))·v per (group, head) as two GEMMs over blocks of queries. */
    static float[] attendByGemm(CpuThreadPool pool, float[] q, float[] k, float[] v, int batch, int nq, int nk,
            int heads, int d) {
        int width = heads * d;
        float[] out = new float[batch * nq * width];
        float scale = (float) (1.0 / Math.sqrt(d));
        for (int b = 0; b < batch; b++) {
            for (int h = 0; h < heads; h++) {
                float[] kh = new float[nk * d];
                float[] vh = new float[nk * d];
                for (int t = 0; t < nk; t++) {
                    System.arraycopy(k, (b * nk + t) * width + h * d, kh, t * d, d);
                    System.arraycopy(v, (b * nk + t) * width + h * d, vh, t * d, d);
                }
                PackedMatrix keysT = PackedMatrix.fromOutIn(kh, nk, d);
                PackedMatrix values = PackedMatrix.fromInOut(vh, nk, d);
                for (int r0 = 0; r0 < nq; r0 += GEMM_ROWS) {
                    int rows = Math.min(GEMM_ROWS, nq - r0);
                    float[] qb = new float[rows * d];
                    for (int i = 0; i < rows; i++) {
                        System.arraycopy(q, (b * nq + r0 + i) * width + h * d, qb, i * d, d);
                    }
                    float[] scores = new float[rows * nk];
                    Gemm.multiply(pool, qb, rows, keysT, null, scores);
                    pool.forRange(rows, 8, (i0, i1) -> {
                        for (int i = i0; i < i1; i++) {
                            for (int t = 0; t < nk; t++) {
                                scores[i * nk + t] *= scale;
                            }
                            CpuOps.softmax(scores, i * nk, nk);
                        }
                    });
                    float[] ob = new float[rows * d];
                    Gemm.multiply(pool, scores, rows, values, null, ob);
                    for (int i = 0; i < rows; i++) {
                        System.arraycopy(ob, i * d, out, (b * nq + r0 + i) * width + h * d, d);
                    }
                }
            }
        }
        return out;
    }

    static float[] attendDirect(CpuThreadPool pool, float[] q, float[] k, float[] v, int batch, int nq, int nk,
            int heads, int d) {
        int width = heads * d;
        int groups = batch * heads;
        float[][] keysT = new float[groups][];
        float[][] values = new float[groups][];
        pool.forEach(groups, g -> {
            int b = g / heads;
            int h = g % heads;
            float[] kt = new float[d * nk];
            float[] vv = new float[nk * d];
            for (int t = 0; t < nk; t++) {
                int src = (b * nk + t) * width + h * d;
                for (int i = 0; i < d; i++) {
                    kt[i * nk + t] = k[src + i];
                }
                System.arraycopy(v, src, vv, t * d, d);
            }
            keysT[g] = kt;
            values[g] = vv;
        });
        float[] out = new float[batch * nq * width];
        float scale = (float) (1.0 / Math.sqrt(d));
        int blocks = (nq + QUERY_BLOCK - 1) / QUERY_BLOCK;
        pool.forEach(groups * blocks, task -> {
            int g = task / blocks;
            int blk = task % blocks;
            int b = g / heads;
            int h = g % heads;
            float[] kt = keysT[g];
            float[] vv = values[g];
            float[] sc = new float[nk];
            float[] o = new float[d];
            int last = Math.min(nq, (blk + 1) * QUERY_BLOCK);
            for (int i = blk * QUERY_BLOCK; i < last; i++) {
                int qo = (b * nq + i) * width + h * d;
                java.util.Arrays.fill(sc, 0f);
                for (int c = 0; c < d; c++) {
                    float qc = q[qo + c];
                    int row = c * nk;
                    for (int t = 0; t < nk; t++) {
                        sc[t] += qc * kt[row + t];
                    }
                }
                for (int t = 0; t < nk; t++) {
                    sc[t] *= scale;
                }
                CpuOps.softmax(sc, 0, nk);
                java.util.Arrays.fill(o, 0f);
                for (int t = 0; t < nk; t++) {
                    float p = sc[t];
                    int row = t * d;
                    for (int c = 0; c < d; c++) {
                        o[c] += p * vv[row + c];
                    }
                }
                System.arraycopy(o, 0, out, qo, d);
            }
        });
        return out;
    }
}
