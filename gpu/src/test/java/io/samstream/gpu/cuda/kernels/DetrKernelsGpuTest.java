package io.samstream.gpu.cuda.kernels;

import static org.junit.jupiter.api.Assertions.assertThrows;

import io.samstream.gpu.cuda.Bf16;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.GpuTestSupport;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * SAM 3's DETR decoder kernels (detr_ops.cuh) against plain Java written from the CPU reference's formulas
 * (BoxRelativeBias, SineEmbedding, DetrDecoder's box update, Attention with a bias): the box distances and sine
 * encodings to one bf16 rounding, the fp32 linear and box update to float rounding, the biased attention to the
 * bf16 output's rounding plus a little for the fp32 softmax.
 */
class DetrKernelsGpuTest extends GpuTestBase {
    @Test
    void boxDeltasAndSineMatchTheReference() {
        long mark = gpu.pool.mark();
        int n = 37, h = 9, w = 7, d = 64;
        float[] boxes = boxes(new Random(1), n);
        DeviceBuffer db = gpu.uploadF32(boxes, "boxes");
        DeviceBuffer dy = gpu.poisoned((long) n * h * 8, "dy"), dx = gpu.poisoned((long) n * w * 8, "dx");
        DetrKernels k = DetrKernels.of(gpu.kernels);
        k.boxDeltas(gpu.stream, db, dy, dx, n, h, w);
        float[] wantY = new float[n * h * 8], wantX = new float[n * w * 8];
        for (int q = 0; q < n; q++) {
            float cx = boxes[4 * q], cy = boxes[4 * q + 1], bw = boxes[4 * q + 2], bh = boxes[4 * q + 3];
            for (int j = 0; j < h; j++) {
                wantY[(q * h + j) * 8] = Bf16.round(squash((float) j / h - (cy - 0.5f * bh)));
                wantY[(q * h + j) * 8 + 1] = Bf16.round(squash((float) j / h - (cy + 0.5f * bh)));
            }
            for (int i = 0; i < w; i++) {
                wantX[(q * w + i) * 8] = Bf16.round(squash((float) i / w - (cx - 0.5f * bw)));
                wantX[(q * w + i) * 8 + 1] = Bf16.round(squash((float) i / w - (cx + 0.5f * bw)));
            }
        }
        GpuTestSupport.assertClose("box row distances", wantY, gpu.download(dy, n * h * 8), 0x1p-7, 1e-3);
        GpuTestSupport.assertClose("box column distances", wantX, gpu.download(dx, n * w * 8), 0x1p-7, 1e-3);

        DeviceBuffer sine = gpu.poisoned((long) n * 2 * d, "sine");
        k.boxSine(gpu.stream, db, sine, n, d);
        float[] want = new float[n * 2 * d];
        int half = d / 2;
        int[] coords = {1, 0, 2, 3};
        for (int q = 0; q < n; q++) {
            for (int block = 0; block < 4; block++) {
                float e = boxes[4 * q + coords[block]] * (float) (2 * Math.PI);
                for (int j = 0; j < half; j++) {
                    float p = e / (float) Math.pow(10000.0, (float) (2 * (j / 2)) / half);
                    want[q * 2 * d + block * half + j] = (float) (j % 2 == 0 ? Math.sin(p) : Math.cos(p));
                }
            }
        }
        GpuTestSupport.assertClose("box sine", want, gpu.download(sine, n * 2 * d), 0x1p-7, 1e-3);
        gpu.pool.release(mark);
    }

    @Test
    void smallLinearAndBoxUpdateMatchTheReference() {
        long mark = gpu.pool.mark();
        Random rnd = new Random(2);
        int rows = 200, kk = 256, o = 4;
        float[] x = GpuTestSupport.randomBf16(rnd, rows * kk, 1.0), wt = new float[o * kk], b = new float[o];
        for (int i = 0; i < wt.length; i++) {
            wt[i] = (float) (rnd.nextGaussian() * 0.05);
        }
        for (int i = 0; i < o; i++) {
            b[i] = (float) rnd.nextGaussian();
        }
        DeviceBuffer y = gpu.pool.allocate((long) rows * o * 4, "y");
        DetrKernels k = DetrKernels.of(gpu.kernels);
        k.smallLinear(gpu.stream, gpu.upload(x, "x"), gpu.uploadF32(wt, "w"), gpu.uploadF32(b, "b"), y, rows, kk, o);
        float[] delta = new float[rows * o];
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < o; c++) {
                double s = b[c];
                for (int i = 0; i < kk; i++) {
                    s += (double) x[r * kk + i] * wt[c * kk + i];
                }
                delta[r * o + c] = (float) s;
            }
        }
        GpuTestSupport.assertClose("small linear", delta, gpu.downloadF32(y, rows * o), 1e-5, 1e-5);

        float[] boxes = boxes(rnd, rows);
        DeviceBuffer db = gpu.uploadF32(boxes, "boxes");
        k.boxUpdate(gpu.stream, db, y, rows);
        float[] want = new float[boxes.length];
        for (int i = 0; i < want.length; i++) {
            float c = Math.min(Math.max(boxes[i], 0f), 1f);
            float inv = (float) Math.log(Math.max(c, 1e-3f) / Math.max(1f - c, 1e-3f));
            want[i] = (float) (1 / (1 + Math.exp(-(delta[i] + inv))));
        }
        GpuTestSupport.assertClose("box update", want, gpu.downloadF32(db, want.length), 1e-5, 1e-5);
        gpu.pool.release(mark);
    }

    @ParameterizedTest(name = "rows={0} d={1} heads={2} map={3}x{4}")
    @CsvSource({"201, 256, 8, 72, 72", "21, 32, 4, 8, 8", "5, 128, 2, 3, 11"})
    void biasedAttentionMatchesTheReference(int rows, int d, int heads, int h, int w) {
        long mark = gpu.pool.mark();
        Random rnd = new Random(rows * 13L + d);
        int nk = h * w, hd = d / heads, ld = (heads + 7) / 8 * 8, n = rows - 1;
        float[] q = GpuTestSupport.randomBf16(rnd, rows * d, 1.0), k = GpuTestSupport.randomBf16(rnd, nk * d, 1.0);
        float[] v = GpuTestSupport.randomBf16(rnd, nk * d, 1.0);
        float[] ey = GpuTestSupport.randomBf16(rnd, n * h * ld, 2.0), ex = GpuTestSupport.randomBf16(rnd, n * w * ld, 2.0);
        float scale = (float) (1 / Math.sqrt(hd));
        DeviceBuffer out = gpu.poisoned((long) rows * d, "out");
        DetrKernels.of(gpu.kernels).rpbAttention(gpu.stream, gpu.upload(q, "q"), gpu.upload(k, "k"),
                gpu.upload(v, "v"), gpu.upload(ey, "ey"), gpu.upload(ex, "ex"), ld, out, rows, d, heads, h, w, scale);
        float[] want = new float[rows * d];
        double[] s = new double[nk];
        for (int r = 0; r < rows; r++) {
            for (int head = 0; head < heads; head++) {
                double max = Double.NEGATIVE_INFINITY;
                for (int t = 0; t < nk; t++) {
                    double dot = 0;
                    for (int c = 0; c < hd; c++) {
                        dot += (double) q[r * d + head * hd + c] * k[t * d + head * hd + c];
                    }
                    double bias = r == 0 ? 0 : ey[((r - 1) * h + t / w) * ld + head] + ex[((r - 1) * w + t % w) * ld + head];
                    s[t] = dot * scale + bias;
                    max = Math.max(max, s[t]);
                }
                double sum = 0;
                for (int t = 0; t < nk; t++) {
                    s[t] = Math.exp(s[t] - max);
                    sum += s[t];
                }
                for (int c = 0; c < hd; c++) {
                    double a = 0;
                    for (int t = 0; t < nk; t++) {
                        a += s[t] * v[t * d + head * hd + c];
                    }
                    want[r * d + head * hd + c] = (float) (a / sum);
                }
            }
        }
        GpuTestSupport.assertClose("biased attention", want, gpu.download(out, rows * d), 0x1p-7,
                2e-3 * GpuTestSupport.rms(want));
        gpu.pool.release(mark);
    }

    @Test
    void badShapesAreRefusedBeforeLaunch() {
        long mark = gpu.pool.mark();
        DeviceBuffer small = gpu.pool.allocate(256, "small");
        DetrKernels k = DetrKernels.of(gpu.kernels);
        assertThrows(IllegalArgumentException.class, () -> k.boxDeltas(gpu.stream, small, small, small, 200, 72, 72));
        assertThrows(IllegalArgumentException.class, () -> k.boxSine(gpu.stream, small, small, 4, 7));
        assertThrows(IllegalArgumentException.class, () -> k.rpbAttention(gpu.stream, small, small, small, small,
                small, 8, small, 2, 256, 2, 4, 4, 1f));   // head width 128
        gpu.pool.release(mark);
    }

    private static float squash(float v) {
        float s = v * 8f;
        return Math.signum(s) * (float) (Math.log(Math.abs(s) + 1f) / Math.log(2.0)) / 3f;
    }

    /** Boxes (cx, cy, w, h) in 0..1, some reaching past the map's edges. */
    private static float[] boxes(Random rnd, int n) {
        float[] b = new float[n * 4];
        for (int i = 0; i < b.length; i++) {
            b[i] = 0.02f + 0.96f * rnd.nextFloat();
        }
        return b;
    }
}
