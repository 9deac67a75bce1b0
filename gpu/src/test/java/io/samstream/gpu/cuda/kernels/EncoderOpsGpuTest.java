package io.samstream.gpu.cuda.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import io.samstream.gpu.cuda.Bf16;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.GpuTestSupport;

/**
 * The image encoder's data-movement kernels (encoder_ops.cuh) against plain Java: patch rows, the
 * periodic add (position embedding), 3x3 im2col, the transposed convolution's scatter and the token ->
 * channels-first fp32 transpose. All but the add only move (and round) values, so they must match exactly.
 */
class EncoderOpsGpuTest extends GpuTestBase {

    private DeviceBuffer uploadF32(float[] v, String label) {
        DeviceBuffer b = gpu.pool.allocate((long) v.length * 4, label);
        gpu.staging.buffer().asFloatBuffer().put(v);
        gpu.stream.upload(gpu.staging, 0, b, 0, (long) v.length * 4);
        gpu.stream.synchronize();
        return b;
    }

    private float[] downloadF32(DeviceBuffer b, int n) {
        gpu.stream.synchronize();
        gpu.stream.download(b, 0, gpu.staging, 0, (long) n * 4);
        gpu.stream.synchronize();
        float[] out = new float[n];
        gpu.staging.buffer().asFloatBuffer().get(out);
        return out;
    }

    @ParameterizedTest(name = "batch={0} size={1} patch={2}")
    @CsvSource({"2, 64, 16", "1, 256, 16", "3, 48, 8", "1, 1024, 16"})
    void patchifyMatchesJava(int batch, int s, int p) {
        long mark = gpu.pool.mark();
        Random rnd = new Random(s * 31L + p + batch);
        float[] img = new float[batch * 3 * s * s];
        for (int i = 0; i < img.length; i++) {
            img[i] = (float) rnd.nextGaussian();
        }
        int e = s / p, k = 3 * p * p;
        DeviceBuffer rows = gpu.poisoned((long) batch * e * e * k, "rows");
        EncoderOpsKernels.of(gpu.kernels).patchify(gpu.stream, uploadF32(img, "image"), rows, batch, s, p);
        float[] got = gpu.download(rows, batch * e * e * k);
        for (int b = 0; b < batch; b++) {
            for (int t = 0; t < e * e; t++) {
                int py = t / e, px = t % e;
                for (int ch = 0; ch < 3; ch++) {
                    for (int dy = 0; dy < p; dy++) {
                        for (int dx = 0; dx < p; dx++) {
                            float want = Bf16.round(img[((b * 3 + ch) * s + py * p + dy) * s + px * p + dx]);
                            float have = got[(b * e * e + t) * k + (ch * p + dy) * p + dx];
                            if (want != have) {
                                throw new AssertionError("patchify image " + b + " token " + t + " ch " + ch + " dy " + dy
                                        + " dx " + dx + ": " + have + " != " + want);
                            }
                        }
                    }
                }
            }
        }
        gpu.pool.release(mark);
    }

    @Test
    void addPeriodicAddsThePositionEmbeddingToEveryImage() {
        long mark = gpu.pool.mark();
        Random rnd = new Random(7);
        int period = 64 * 24, images = 3;
        float[] x = GpuTestSupport.randomBf16(rnd, period * images, 1.0);
        float[] pos = GpuTestSupport.randomBf16(rnd, period, 0.1);
        DeviceBuffer xb = gpu.upload(x, "x");
        EncoderOpsKernels.of(gpu.kernels).addPeriodic(gpu.stream, xb, gpu.upload(pos, "pos"), x.length, period);
        float[] got = gpu.download(xb, x.length);
        for (int i = 0; i < x.length; i++) {
            assertEquals(Bf16.round(x[i] + pos[i % period]), got[i], 0f, "element " + i);
        }
        gpu.pool.release(mark);
    }

    @ParameterizedTest(name = "batch={0} grid={1}x{2} c={3}")
    @CsvSource({"2, 5, 7, 16", "1, 64, 64, 256", "3, 3, 3, 8"})
    void im2col3x3MatchesJava(int batch, int h, int w, int c) {
        long mark = gpu.pool.mark();
        Random rnd = new Random(h * 7L + w + c);
        float[] x = GpuTestSupport.randomBf16(rnd, batch * h * w * c, 1.0);
        DeviceBuffer rows = gpu.poisoned((long) batch * h * w * 9 * c, "rows");
        EncoderOpsKernels.of(gpu.kernels).im2col3x3(gpu.stream, gpu.upload(x, "x"), rows, batch, h, w, c);
        float[] got = gpu.download(rows, batch * h * w * 9 * c);
        for (int b = 0; b < batch; b++) {
            for (int y = 0; y < h; y++) {
                for (int xx = 0; xx < w; xx++) {
                    for (int tap = 0; tap < 9; tap++) {
                        int iy = y + tap / 3 - 1, ix = xx + tap % 3 - 1;
                        for (int ch = 0; ch < c; ch++) {
                            float want = iy < 0 || iy >= h || ix < 0 || ix >= w ? 0f : x[((b * h + iy) * w + ix) * c + ch];
                            float have = got[((b * h + y) * w + xx) * 9 * c + tap * c + ch];
                            if (want != have) {
                                throw new AssertionError("im2col3x3 at " + b + "," + y + "," + xx + " tap " + tap + " ch "
                                        + ch + ": " + have + " != " + want);
                            }
                        }
                    }
                }
            }
        }
        gpu.pool.release(mark);
    }

    @ParameterizedTest(name = "batch={0} grid={1}x{2} c={3}")
    @CsvSource({"1, 72, 72, 512", "2, 5, 7, 16", "3, 3, 2, 8"})
    void convTranspose2x2ScatterPutsEachTapOnItsPixel(int batch, int h, int w, int c) {
        long mark = gpu.pool.mark();
        Random rnd = new Random(h * 5L + w + c);
        int n = batch * h * w * 4 * c;
        float[] y = GpuTestSupport.randomBf16(rnd, n, 1.0);
        DeviceBuffer out = gpu.poisoned(n, "out");
        EncoderOpsKernels.of(gpu.kernels).convTranspose2x2Scatter(gpu.stream, gpu.upload(y, "y"), out, batch, h, w, c);
        float[] got = gpu.download(out, n);
        for (int b = 0; b < batch; b++) {
            for (int py = 0; py < h; py++) {
                for (int px = 0; px < w; px++) {
                    for (int tap = 0; tap < 4; tap++) {
                        int oy = 2 * py + tap / 2, ox = 2 * px + tap % 2;
                        for (int ch = 0; ch < c; ch++) {
                            float want = y[((b * h + py) * w + px) * 4 * c + tap * c + ch];
                            float have = got[((b * 2 * h + oy) * 2 * w + ox) * c + ch];
                            if (want != have) {
                                throw new AssertionError("convTranspose2x2Scatter at " + b + "," + py + "," + px
                                        + " tap " + tap + " ch " + ch + ": " + have + " != " + want);
                            }
                        }
                    }
                }
            }
        }
        gpu.pool.release(mark);
    }

    @ParameterizedTest(name = "batch={0} t={1} c={2}")
    @CsvSource({"2, 4096, 256", "1, 37, 40", "3, 100, 8"})
    void tokensToChwTransposes(int batch, int t, int c) {
        long mark = gpu.pool.mark();
        Random rnd = new Random(t * 3L + c);
        float[] y = GpuTestSupport.randomBf16(rnd, batch * t * c, 1.0);
        DeviceBuffer out = gpu.pool.allocate((long) batch * t * c * 4, "out");
        EncoderOpsKernels.of(gpu.kernels).tokensToChw(gpu.stream, gpu.upload(y, "y"), out, batch, t, c);
        float[] got = downloadF32(out, batch * t * c);
        for (int b = 0; b < batch; b++) {
            for (int i = 0; i < t; i++) {
                for (int ch = 0; ch < c; ch++) {
                    float want = y[(b * t + i) * c + ch], have = got[(b * c + ch) * t + i];
                    if (want != have) {
                        throw new AssertionError("tokensToChw " + b + "," + i + "," + ch + ": " + have + " != " + want);
                    }
                }
            }
        }
        gpu.pool.release(mark);
    }

    @Test
    void badShapesAreRefusedBeforeLaunch() {
        long mark = gpu.pool.mark();
        DeviceBuffer small = gpu.pool.allocate(1024, "small");
        assertThrows(IllegalArgumentException.class, () -> EncoderOpsKernels.of(gpu.kernels).patchify(gpu.stream, small, small, 1, 64, 16));
        assertThrows(IllegalArgumentException.class, () -> EncoderOpsKernels.of(gpu.kernels).patchify(gpu.stream, small, small, 1, 60, 12));
        assertThrows(IllegalArgumentException.class, () -> EncoderOpsKernels.of(gpu.kernels).im2col3x3(gpu.stream, small, small, 1, 4, 4, 12));
        assertThrows(IllegalArgumentException.class, () -> EncoderOpsKernels.of(gpu.kernels).addPeriodic(gpu.stream, small, small, 4096, 8));
        assertThrows(IllegalArgumentException.class, () -> EncoderOpsKernels.of(gpu.kernels).tokensToChw(gpu.stream, small, small, 1, 64, 8));
        assertThrows(IllegalArgumentException.class, () -> EncoderOpsKernels.of(gpu.kernels).convTranspose2x2Scatter(gpu.stream, small, small, 1, 4, 4, 12));
        assertThrows(IllegalArgumentException.class, () -> EncoderOpsKernels.of(gpu.kernels).convTranspose2x2Scatter(gpu.stream, small, small, 1, 4, 4, 16));
        gpu.pool.release(mark);
    }
}
