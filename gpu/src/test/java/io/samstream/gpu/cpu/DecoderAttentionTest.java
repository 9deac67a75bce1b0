package io.samstream.gpu.cpu;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

class DecoderAttentionTest {
    @Test
    void downsampledMultiHeadAttentionMatchesDirectComputation() {
        Random rnd = new Random(8);
        int dim = 12;
        int internal = 6;
        int heads = 3;
        int nq = 70; // more than one query block
        int nk = 5;
        float[][] w = new float[4][];
        float[][] b = new float[4][];
        for (int i = 0; i < 3; i++) {
            w[i] = TinySam.random(rnd, internal * dim, 0.5);
            b[i] = TinySam.random(rnd, internal, 0.5);
        }
        w[3] = TinySam.random(rnd, dim * internal, 0.5);
        b[3] = TinySam.random(rnd, dim, 0.5);
        DecoderAttention attn = new DecoderAttention(linear(w[0], b[0], dim, internal),
                linear(w[1], b[1], dim, internal), linear(w[2], b[2], dim, internal),
                linear(w[3], b[3], internal, dim), heads);
        float[] q = TinySam.random(rnd, nq * dim, 1);
        float[] k = TinySam.random(rnd, nk * dim, 1);
        float[] v = TinySam.random(rnd, nk * dim, 1);
        float[] actual;
        try (CpuThreadPool pool = new CpuThreadPool(2)) {
            actual = attn.forward(pool, q, nq, k, v, nk);
        }

        float[] qp = NaiveOps.linear(q, nq, dim, w[0], b[0], internal);
        float[] kp = NaiveOps.linear(k, nk, dim, w[1], b[1], internal);
        float[] vp = NaiveOps.linear(v, nk, dim, w[2], b[2], internal);
        int hd = internal / heads;
        float[] out = new float[nq * internal];
        for (int h = 0; h < heads; h++) {
            for (int i = 0; i < nq; i++) {
                double[] s = new double[nk];
                for (int j = 0; j < nk; j++) {
                    for (int c = 0; c < hd; c++) {
                        s[j] += (double) qp[i * internal + h * hd + c] * kp[j * internal + h * hd + c];
                    }
                    s[j] /= Math.sqrt(hd);
                }
                NaiveOps.softmax(s);
                for (int c = 0; c < hd; c++) {
                    double o = 0;
                    for (int j = 0; j < nk; j++) {
                        o += s[j] * vp[j * internal + h * hd + c];
                    }
                    out[i * internal + h * hd + c] = (float) o;
                }
            }
        }
        float[] expected = NaiveOps.linear(out, nq, internal, w[3], b[3], dim);
        double d = NaiveOps.maxAbsDiff(expected, actual);
        assertTrue(d < 1e-5, "decoder attention differs by " + d);
    }

    private static Linear linear(float[] w, float[] b, int in, int out) {
        return new Linear(PackedMatrix.fromOutIn(w, out, in), b);
    }
}
