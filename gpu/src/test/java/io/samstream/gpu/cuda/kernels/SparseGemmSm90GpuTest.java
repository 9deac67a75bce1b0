package io.samstream.gpu.cuda.kernels;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.GpuTestSupport;
import io.samstream.gpu.cuda.kernels.SparseGemmKernels.SparseTile;
import io.samstream.gpu.cuda.kernels.SparseGemmKernels.SparseWeight;
import io.samstream.gpu.sparse.TwoFourPruning;
import io.samstream.gpu.sparse.TwoFourWeights;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Hopper sparse GEMMs (wgmma.mma_async.sp: the cp.async kernel gemm_sparse_sm90.cuh, {@link SparseTile#H128x128},
 * and the TMA kernel gemm_sparse_sm90_tma.cuh with cooperative and ping-pong consumers, {@link SparseTile#HTS128x128}
 * and {@link SparseTile#HTP128x128}) against the fp64 reference on the pruned weights: the vit_b shapes with a ragged
 * M, every epilogue (the residual in place too), padded n and k, and many output tiles per CTA; the TMA kernels first
 * under a time limit (a deadlock in their barrier protocol fails that, not the whole run). run-gpu-tests.sh runs it
 * in mode "sparse"; skips, with the reason, on GPUs other than compute capability 9.0.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SparseGemmSm90GpuTest extends GpuTestBase {
    private static final SparseTile[] HOPPER_TILES = {SparseTile.H128x128, SparseTile.HTS128x128, SparseTile.HTP128x128};

    @BeforeEach
    void requireHopper() {
        assumeTrue(SparseGemmKernels.of(gpu.kernels).supports(SparseTile.H128x128),
                "the Hopper sparse GEMM needs compute capability 9.0, this GPU is " + gpu.context.info().describe());
    }

    static Stream<Arguments> cases() {
        return Stream.of(HOPPER_TILES).flatMap(tile -> shapes().map(a -> Arguments.of(tile, a.get()[0], a.get()[1],
                a.get()[2], a.get()[3])));
    }

    private static Stream<Arguments> shapes() {
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
                Arguments.of(4096, 768, 3072, SparseGemmGpuTest.Epi.BIAS_RESIDUAL),
                // ~2.5 output tiles per CTA of an H200 (the persistent TMA kernels' turns and ring phases run on)
                Arguments.of(128 * 40 + 5, 1024, 256, SparseGemmGpuTest.Epi.IN_PLACE_RESIDUAL));
    }

    /**
     * The TMA kernels finish (no deadlock: the producer's byte counts match what the copies bring, the ring, turn and
     * residual barriers' phases line up) on k-tile counts around the ring depth, ragged K, one tile and many per CTA,
     * with and without the residual (its barrier), each launch checked on a few rows.
     */
    @Test
    @Order(1)
    void tmaKernelsNeverHang() {
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            for (SparseTile tile : new SparseTile[] {SparseTile.HTS128x128, SparseTile.HTP128x128}) {
                for (int kTiles : new int[] {1, 2, 3, 4, 5, 6, 7, 9}) {
                    for (boolean residual : new boolean[] {false, true}) {
                        check(tile, 128 * 66 + 5, 8 * 128, 128 * kTiles - 64, residual ? SparseGemmGpuTest.Epi.IN_PLACE_RESIDUAL
                                : SparseGemmGpuTest.Epi.BIAS_GELU, true);
                        check(tile, 101, 120, 128 * kTiles, residual ? SparseGemmGpuTest.Epi.BIAS_RESIDUAL
                                : SparseGemmGpuTest.Epi.BIAS, true);
                    }
                }
            }
        }, "the TMA sparse GEMM did not finish within 120 s: a deadlock in its mbarrier protocol (gemm_sparse_sm90_tma.cuh)");
    }

    @ParameterizedTest(name = "{0} m={1} n={2} k={3} {4}")
    @MethodSource("cases")
    @Order(2)
    void matchesReferenceOnThePrunedWeights(SparseTile tile, int m, int n, int k, SparseGemmGpuTest.Epi epi) {
        check(tile, m, n, k, epi, false);
    }

    /** One launch on random data against the fp64 reference: every row, or 8 of them (first, last, random). */
    private void check(SparseTile tile, int m, int n, int k, SparseGemmGpuTest.Epi epi, boolean sampled) {
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
        GpuTestSupport.GuardedOutput guarded = gpu.guardedOutput(m * n, res, inPlace);
        DeviceBuffer dc = guarded.c(), dres = guarded.residual();
        SparseGemmKernels.of(gpu.kernels).run(gpu.stream, gpu.upload(a, "a"), sw, hasBias ? gpu.upload(bias, "bias") : null, dres, dc,
                m, gelu, tile);
        float[] got = guarded.download(gpu);
        String what = String.format("gemmSparse %s m=%d n=%d k=%d %s", tile, m, n, k, epi);
        if (sampled) {
            int[] rows = GpuTestSupport.sampleRows(rnd, 8, m);
            float[] ref = ReferenceOps.gemmRows(a, w, bias, res, rows, n, k, gelu);
            float[] out = GpuTestSupport.gatherRows(got, rows, n);
            GpuTestSupport.assertClose(what + " (8 rows)", ref, out, 0x1p-8, 1e-3 * GpuTestSupport.rms(ref));
        } else {
            float[] ref = ReferenceOps.gemmRows(a, w, bias, res, ReferenceOps.allRows(m), n, k, gelu);
            System.out.println(what + ": " + whereWrong(ref, got, m, n));
            GpuTestSupport.assertClose(what, ref, Arrays.copyOf(got, m * n), 0x1p-8, 1e-3 * GpuTestSupport.rms(ref));
        }
        GpuTestSupport.assertWrittenExactly(what, got, m * n);
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
