package io.samstream.gpu.cuda.kernels;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import io.samstream.gpu.cuda.Bf16;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.GpuTestSupport;

/**
 * LayerNorm (fp32 statistics, bf16 in/out) against a double reference, on each of the kernels the width picks (up to
 * 256 N columns: _vN, N = 1 .. 5, ragged widths included; wider: the 2048-column one); the fused residual variant
 * must also write the bf16 sum exactly (it is a plain bf16 add). Tolerance: one bf16 rounding of the
 * output (2^-8 relative) plus 2e-3 of the output scale for the rounded inputs' statistics. GroupNorm (+ ReLU) of a
 * channels-last image likewise, its statistics over all of a group's pixels and channels.
 */
class LayerNormGpuTest extends GpuTestBase {
    @ParameterizedTest(name = "rows={0} c={1} residual={2}")
    @CsvSource({"37, 768, false", "37, 768, true", "4096, 768, true", "13, 1024, false", "13, 1280, true",
            "100, 256, false", "9, 2048, true", "5, 8, false", "3, 1288, true", "11, 512, true", "7, 264, false",
            "7, 776, true"})
    void matchesReference(int rows, int c, boolean withResidual) {
        long mark = gpu.pool.mark();
        Random rnd = new Random(rows * 31L + c);
        float[] x = GpuTestSupport.randomBf16(rnd, rows * c, 2.0);
        for (int i = 0; i < x.length; i++) {
            x[i] = Bf16.round(x[i] + 3.0f);   // a mean far from 0 tests the two-pass variance
        }
        float[] res = withResidual ? GpuTestSupport.randomBf16(rnd, rows * c, 1.0) : null;
        float[] gamma = GpuTestSupport.randomBf16(rnd, c, 1.0), beta = GpuTestSupport.randomBf16(rnd, c, 0.5);
        float eps = 1e-6f;

        DeviceBuffer dx = gpu.upload(x, "x");
        DeviceBuffer dres = withResidual ? gpu.upload(res, "residual") : null;
        DeviceBuffer dsum = withResidual ? gpu.poisoned((long) rows * c, "sum") : null;
        DeviceBuffer dy = gpu.poisoned((long) rows * c, "y");
        NormKernels.of(gpu.kernels).layerNorm(gpu.stream, dx, dres, dsum, gpu.upload(gamma, "gamma"), gpu.upload(beta, "beta"), dy,
                rows, c, eps);

        float[] ref = ReferenceOps.layerNorm(x, res, gamma, beta, rows, c, eps);
        GpuTestSupport.assertClose(String.format("layernorm rows=%d c=%d residual=%s", rows, c, withResidual), ref,
                gpu.download(dy, rows * c), 0x1p-8, 2e-3 * GpuTestSupport.rms(ref));
        if (withResidual) {
            float[] sum = new float[rows * c];
            for (int i = 0; i < sum.length; i++) {
                sum[i] = Bf16.round(x[i] + res[i]);
            }
            assertArrayEquals(sum, gpu.download(dsum, rows * c), "x + residual in bf16");
        }
        gpu.pool.release(mark);
    }

    /** The pre-norm step in place: x <- x + r, h <- LN(x), with x, sum and (separately) y aliased. */
    @Test
    void inPlaceResidualUpdate() {
        long mark = gpu.pool.mark();
        int rows = 64, c = 768;
        Random rnd = new Random(3);
        float[] x = GpuTestSupport.randomBf16(rnd, rows * c, 1.0), r = GpuTestSupport.randomBf16(rnd, rows * c, 1.0);
        float[] gamma = GpuTestSupport.randomBf16(rnd, c, 1.0), beta = GpuTestSupport.randomBf16(rnd, c, 0.5);
        DeviceBuffer dx = gpu.upload(x, "x"), dy = gpu.poisoned((long) rows * c, "y");
        NormKernels.of(gpu.kernels).layerNorm(gpu.stream, dx, gpu.upload(r, "r"), dx, gpu.upload(gamma, "gamma"),
                gpu.upload(beta, "beta"), dy, rows, c, 1e-6f);
        float[] sum = gpu.download(dx, rows * c);
        for (int i = 0; i < sum.length; i++) {
            assertTrue(sum[i] == Bf16.round(x[i] + r[i]), "sum at " + i);
        }
        float[] ref = ReferenceOps.layerNorm(x, r, gamma, beta, rows, c, 1e-6);
        GpuTestSupport.assertClose("layernorm in place", ref, gpu.download(dy, rows * c), 0x1p-8,
                2e-3 * GpuTestSupport.rms(ref));
        gpu.pool.release(mark);
    }

    @ParameterizedTest(name = "pixels={0} c={1} groups={2} relu={3}")
    @CsvSource({"82944, 256, 8, true", "1024, 32, 8, true", "37, 64, 8, false", "100, 24, 3, false"})
    void groupNormMatchesReference(int pixels, int c, int groups, boolean relu) {
        long mark = gpu.pool.mark();
        Random rnd = new Random(pixels * 7L + c);
        float[] x = GpuTestSupport.randomBf16(rnd, pixels * c, 2.0);
        for (int i = 0; i < x.length; i++) {
            x[i] = Bf16.round(x[i] + (i % c) * 0.05f + 1.0f);   // a mean far from 0, differing per channel
        }
        float[] gamma = GpuTestSupport.randomBf16(rnd, c, 1.0), beta = GpuTestSupport.randomBf16(rnd, c, 0.5);
        float eps = 1e-5f;
        DeviceBuffer dx = gpu.upload(x, "x");
        NormKernels.of(gpu.kernels).groupNorm(gpu.stream, dx, gpu.pool.allocate(NormKernels.groupNormScratchBytes(
                groups), "partials"), gpu.uploadF32(gamma, "gamma"), gpu.uploadF32(beta, "beta"), pixels, c, groups,
                eps, relu);
        float[] ref = new float[x.length];
        int per = c / groups;
        for (int g = 0; g < groups; g++) {
            double sum = 0, sq = 0;
            for (int p = 0; p < pixels; p++) {
                for (int ch = g * per; ch < (g + 1) * per; ch++) {
                    sum += x[p * c + ch];
                    sq += (double) x[p * c + ch] * x[p * c + ch];
                }
            }
            double n = (double) pixels * per, mean = sum / n, inv = 1 / Math.sqrt(sq / n - mean * mean + eps);
            for (int p = 0; p < pixels; p++) {
                for (int ch = g * per; ch < (g + 1) * per; ch++) {
                    double v = (x[p * c + ch] - mean) * inv * gamma[ch] + beta[ch];
                    ref[p * c + ch] = (float) (relu ? Math.max(v, 0) : v);
                }
            }
        }
        GpuTestSupport.assertClose(String.format("groupnorm pixels=%d c=%d groups=%d", pixels, c, groups), ref,
                gpu.download(dx, pixels * c), 0x1p-8, 2e-3 * GpuTestSupport.rms(ref));
        gpu.pool.release(mark);
    }
}
