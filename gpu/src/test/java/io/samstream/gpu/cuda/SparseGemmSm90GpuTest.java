package io.samstream.gpu.cuda;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.samstream.gpu.cuda.CudaKernels.SparseTile;
import io.samstream.gpu.cuda.CudaKernels.SparseWeight;
import io.samstream.gpu.sparse.TwoFourPruning;
import io.samstream.gpu.sparse.TwoFourWeights;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The experimental Hopper sparse GEMM (gemm_sparse_sm90.cuh, wgmma.mma_async.sp, {@link SparseTile#H128x128})
 * against the fp64 reference on the pruned weights: the vit_b shapes with a ragged M, every epilogue, padded
 * n and k. Kept out of the default class list (run-gpu-tests.sh runs it in mode "sparse") until it has passed
 * on the GPU; skips, with the reason, on GPUs other than compute capability 9.0.
 */
class SparseGemmSm90GpuTest extends GpuTestBase {
    @BeforeEach
    void requireHopper() {
        assumeTrue(gpu.kernels.supports(SparseTile.H128x128),
                "the Hopper sparse GEMM needs compute capability 9.0, this GPU is " + gpu.context.info().describe());
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(300, 2304, 768, SparseGemmGpuTest.Epi.BIAS),
                Arguments.of(300, 768, 768, SparseGemmGpuTest.Epi.IN_PLACE_RESIDUAL),
                Arguments.of(300, 3072, 768, SparseGemmGpuTest.Epi.BIAS_GELU),
                Arguments.of(300, 768, 3072, SparseGemmGpuTest.Epi.BIAS_RESIDUAL),
                Arguments.of(257, 768, 768, SparseGemmGpuTest.Epi.PLAIN),
                Arguments.of(257, 768, 768, SparseGemmGpuTest.Epi.BIAS_GELU_RESIDUAL),
                Arguments.of(64, 16, 64, SparseGemmGpuTest.Epi.PLAIN),
                Arguments.of(1, 8, 40, SparseGemmGpuTest.Epi.BIAS_GELU_RESIDUAL),
                Arguments.of(129, 136, 104, SparseGemmGpuTest.Epi.BIAS_GELU_RESIDUAL),
                Arguments.of(77, 24, 1288, SparseGemmGpuTest.Epi.PLAIN),
                Arguments.of(4096, 768, 3072, SparseGemmGpuTest.Epi.BIAS_RESIDUAL));
    }

    @ParameterizedTest(name = "m={0} n={1} k={2} {3}")
    @MethodSource("cases")
    void matchesReferenceOnThePrunedWeights(int m, int n, int k, SparseGemmGpuTest.Epi epi) {
        long mark = gpu.pool.mark();
        Random rnd = new Random(31L * m + 7L * n + k + epi.ordinal());
        float[] a = GpuTestSupport.randomBf16(rnd, m * k, 1.0);
        float[] w = TwoFourPruning.prune(GpuTestSupport.randomBf16(rnd, n * k, 1.0 / Math.sqrt(k / 2.0)), n, k, "w");
        boolean hasBias = epi != SparseGemmGpuTest.Epi.PLAIN && epi != SparseGemmGpuTest.Epi.IN_PLACE_RESIDUAL;
        boolean gelu = epi == SparseGemmGpuTest.Epi.BIAS_GELU || epi == SparseGemmGpuTest.Epi.BIAS_GELU_RESIDUAL;
        boolean inPlace = epi == SparseGemmGpuTest.Epi.IN_PLACE_RESIDUAL;
        boolean hasRes = inPlace || epi == SparseGemmGpuTest.Epi.BIAS_RESIDUAL
                || epi == SparseGemmGpuTest.Epi.BIAS_GELU_RESIDUAL;
        float[] bias = hasBias ? GpuTestSupport.randomBf16(rnd, n, 0.5) : null;
        float[] res = hasRes ? GpuTestSupport.randomBf16(rnd, m * n, 1.0) : null;
        SparseWeight sw = SparseWeightUpload.upload(TwoFourWeights.compress(w, n, k, "w"), gpu.pool, gpu.stream,
                gpu.staging, "w");
        int guard = 4096;
        DeviceBuffer dcAll;
        DeviceBuffer dres = null;
        if (inPlace) {
            float[] withGuard = Arrays.copyOf(res, m * n + guard);
            Arrays.fill(withGuard, m * n, withGuard.length, Float.NaN);
            dcAll = gpu.upload(withGuard, "c (= residual) + guard");
        } else {
            dcAll = gpu.poisoned((long) m * n + guard, "c + guard");
            dres = hasRes ? gpu.upload(res, "residual") : null;
        }
        DeviceBuffer dc = dcAll.slice(0, (long) m * n * 2, "c");
        if (inPlace) {
            dres = dc;
        }
        gpu.kernels.gemmSparse(gpu.stream, gpu.upload(a, "a"), sw, hasBias ? gpu.upload(bias, "bias") : null, dres, dc,
                m, gelu, SparseTile.H128x128);
        float[] got = gpu.download(dcAll, m * n + guard);
        float[] ref = ReferenceOps.gemmRows(a, w, bias, res, ReferenceOps.allRows(m), n, k, gelu);
        System.out.println(whereWrong(ref, got, m, n));
        GpuTestSupport.assertClose(String.format("gemmSparse H128x128 m=%d n=%d k=%d %s", m, n, k, epi), ref,
                Arrays.copyOf(got, m * n), 0x1p-8, 1e-3 * GpuTestSupport.rms(ref));
        for (int i = m * n; i < got.length; i++) {
            assertTrue(Float.isNaN(got[i]), "write past the end of C at element " + i);
        }
        gpu.pool.release(mark);
    }

    /**
     * Where the values off the reference lie in the kernel's work split, to tell a layout error from a race: per
     * 16-column slice of the 128-column weight tile (consumer warpgroup cw, warp w: slice 4 cw + w), per 32-row
     * quarter of the 128-row activation tile, and the number of CTA tiles with any.
     */
    private static String whereWrong(float[] ref, float[] got, int m, int n) {
        int[] bySlice = new int[8], byQuarter = new int[4];
        java.util.Set<Long> tiles = new java.util.TreeSet<>();
        int bad = 0;
        for (int r = 0; r < m; r++) {
            for (int c = 0; c < n; c++) {
                int i = r * n + c;
                if (Math.abs((double) got[i] - ref[i]) > 0x1p-8 * Math.abs(ref[i]) + 0.05) {
                    bad++;
                    bySlice[(c % 128) / 16]++;
                    byQuarter[(r % 128) / 32]++;
                    tiles.add((long) (r / 128) * 100000 + c / 128);
                }
            }
        }
        return String.format("off by > 0.05: %d values; per warp slice (4 cw + warp) %s; per row quarter %s; in %d of %d"
                + " CTA tiles", bad, Arrays.toString(bySlice), Arrays.toString(byQuarter), tiles.size(),
                ((m + 127) / 128) * ((n + 127) / 128));
    }
}
