package io.samstream.gpu.sam2;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.samstream.gpu.cpu.CpuThreadPool;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SdpaTest {
    private static float[] random(Random r, int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) r.nextGaussian();
        }
        return x;
    }

    @Test
    void directAndGemmPathsMatchTheDefinition() {
        Random r = new Random(5);
        int batch = 2;
        int heads = 2;
        int d = 8;
        int nq = 300;
        int nk = 70;
        int w = heads * d;
        float[] q = random(r, batch * nq * w);
        float[] k = random(r, batch * nk * w);
        float[] v = random(r, batch * nk * w);
        try (CpuThreadPool pool = new CpuThreadPool(2)) {
            float[] direct = Sdpa.attendDirect(pool, q, k, v, batch, nq, nk, heads, d);
            float[] gemm = Sdpa.attendByGemm(pool, q, k, v, batch, nq, nk, heads, d);
            for (int b = 0; b < batch; b++) {
                for (int h = 0; h < heads; h++) {
                    for (int i = 0; i < nq; i += 37) {
                        double[] s = new double[nk];
                        double max = Double.NEGATIVE_INFINITY;
                        for (int t = 0; t < nk; t++) {
                            for (int c = 0; c < d; c++) {
                                s[t] += (double) q[(b * nq + i) * w + h * d + c] * k[(b * nk + t) * w + h * d + c];
                            }
                            s[t] /= Math.sqrt(d);
                            max = Math.max(max, s[t]);
                        }
                        double sum = 0;
                        for (int t = 0; t < nk; t++) {
                            s[t] = Math.exp(s[t] - max);
                            sum += s[t];
                        }
                        for (int c = 0; c < d; c++) {
                            double o = 0;
                            for (int t = 0; t < nk; t++) {
                                o += s[t] / sum * v[(b * nk + t) * w + h * d + c];
                            }
                            int at = (b * nq + i) * w + h * d + c;
                            assertEquals(o, direct[at], 1e-5);
                            assertEquals(o, gemm[at], 1e-5);
                        }
                    }
                }
            }
        }
    }
}
