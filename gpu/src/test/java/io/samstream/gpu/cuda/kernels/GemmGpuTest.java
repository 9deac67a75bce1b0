package io.samstream.gpu.cuda.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceInfo;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.GpuTestSupport;
import io.samstream.gpu.cuda.kernels.GemmKernels.GemmTile;

/**
 * The tensor-core GEMM against a double-precision reference on the same bf16 inputs. The kernel
 * accumulates in fp32 and rounds once to bf16, so each element must be within half a bf16 ulp of the
 * exact value (2^-9 relative) plus fp32 accumulation noise: tolerance 2^-8 |ref| + 1e-3 rms(ref).
 * Outputs are poisoned with NaN first and a guard band after C must stay NaN (no write past M x N).
 * The Hopper cases run on every Hopper tile; the TMA pipeline's hang check runs first (a pipeline deadlock would
 * otherwise hang every later test).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GemmGpuTest extends GpuTestBase {
    enum Epi { PLAIN, BIAS, BIAS_GELU, BIAS_RESIDUAL, BIAS_GELU_RESIDUAL, IN_PLACE_RESIDUAL }

    static Stream<Arguments> cases() {
        return Stream.of(
                // SAM vit_b shapes, a ragged M (300 rows: 2 full tiles + 44)
                Arguments.of(300, 2304, 768, Epi.BIAS, GemmTile.T128x128x64),
                Arguments.of(300, 3072, 768, Epi.BIAS_GELU, GemmTile.T128x128x64),
                Arguments.of(300, 768, 3072, Epi.BIAS_RESIDUAL, GemmTile.T128x128x64),
                Arguments.of(300, 768, 3072, Epi.IN_PLACE_RESIDUAL, GemmTile.T128x128x64),
                Arguments.of(257, 768, 768, Epi.BIAS_GELU_RESIDUAL, GemmTile.T128x128x64),
                Arguments.of(257, 768, 768, Epi.PLAIN, GemmTile.T128x128x64),
                // ragged everything: N not a multiple of the tile, K not a multiple of the K step, tiny M
                Arguments.of(1, 8, 8, Epi.BIAS, GemmTile.T128x128x64),
                Arguments.of(129, 136, 40, Epi.BIAS_GELU_RESIDUAL, GemmTile.T128x128x64),
                Arguments.of(129, 264, 40, Epi.BIAS_GELU_RESIDUAL, GemmTile.T128x128x64),
                Arguments.of(129, 264, 104, Epi.BIAS_GELU_RESIDUAL, GemmTile.T128x128x64),
                Arguments.of(77, 24, 1288, Epi.PLAIN, GemmTile.T128x128x64),
                // mask decoder-like widths
                Arguments.of(4096, 32, 256, Epi.BIAS, GemmTile.T128x128x64),
                Arguments.of(7, 2048, 256, Epi.BIAS_GELU, GemmTile.T128x128x64));
    }

    /**
     * The Hopper (wgmma) tiles: every epilogue, the encoders' widths (vit_b / l / h) with ragged M, N that
     * is not a multiple of the tile, K that is not a multiple of the 64-wide K step, tiny M and N.
     */
    static Stream<Arguments> hopperCases() {
        List<Arguments> cases = new ArrayList<>();
        for (GemmTile tile : HOPPER_TILES) {
            cases.add(Arguments.of(300, 2304, 768, Epi.BIAS, tile));                 // vit_b qkv
            cases.add(Arguments.of(300, 3072, 768, Epi.BIAS_GELU, tile));            // vit_b lin1
            cases.add(Arguments.of(300, 768, 3072, Epi.BIAS_RESIDUAL, tile));        // vit_b lin2
            cases.add(Arguments.of(257, 768, 768, Epi.IN_PLACE_RESIDUAL, tile));     // vit_b proj, in place
            cases.add(Arguments.of(130, 3072, 1024, Epi.BIAS, tile));                // vit_l qkv
            cases.add(Arguments.of(130, 1024, 4096, Epi.BIAS_GELU_RESIDUAL, tile));  // vit_l lin2 (+GELU too)
            cases.add(Arguments.of(65, 3840, 1280, Epi.BIAS, tile));                 // vit_h qkv
            cases.add(Arguments.of(65, 5120, 1280, Epi.BIAS_GELU, tile));            // vit_h lin1
            cases.add(Arguments.of(65, 1280, 5120, Epi.IN_PLACE_RESIDUAL, tile));    // vit_h lin2
            cases.add(Arguments.of(200, 256, 2304, Epi.PLAIN, tile));                // neck 3x3 conv rows
            cases.add(Arguments.of(1, 8, 8, Epi.BIAS, tile));
            cases.add(Arguments.of(129, 136, 40, Epi.BIAS_GELU_RESIDUAL, tile));
            cases.add(Arguments.of(129, 264, 104, Epi.BIAS_GELU_RESIDUAL, tile));
            cases.add(Arguments.of(77, 24, 1288, Epi.PLAIN, tile));
            cases.add(Arguments.of(7, 2048, 256, Epi.BIAS_GELU, tile));
        }
        cases.addAll(manyTileCases().toList());
        return cases.stream();
    }

    /**
     * Every Hopper tile: the cp.async-fed fallback (gemm_sm90.cuh) and the TMA kernel (gemm_sm90_tma.cuh) with TMA
     * stores of C, cooperative and with ping-pong consumers.
     */
    static final GemmTile[] HOPPER_TILES = {GemmTile.H128x256, GemmTile.H128x128, GemmTile.HTS128x256,
        GemmTile.HTS128x128, GemmTile.HTP128x128};

    /** More output tiles than SMs (a persistent CTA walks several), all edges ragged at once. */
    static Stream<Arguments> manyTileCases() {
        return Stream.of(Arguments.of(4000, 1032, 104, Epi.BIAS_GELU_RESIDUAL, GemmTile.H128x256),
                Arguments.of(2000, 1032, 104, Epi.IN_PLACE_RESIDUAL, GemmTile.H128x128),
                Arguments.of(2000, 2304, 256, Epi.BIAS_GELU, GemmTile.H128x256),
                // TMA (always persistent): ring phases shifting across output tiles, ragged M, N and K, in place
                // TMA stores: the staging buffers reused across output tiles, boxes clipped at ragged M and N (N of
                // 1032: the last 128x256 tile's second half and second box past N), in place (residual = C)
                Arguments.of(4000, 1032, 104, Epi.BIAS_GELU_RESIDUAL, GemmTile.HTS128x256),
                Arguments.of(6000, 1032, 568, Epi.BIAS_GELU, GemmTile.HTS128x256),
                Arguments.of(6000, 1032, 448, Epi.BIAS_RESIDUAL, GemmTile.HTS128x128),
                Arguments.of(2000, 1032, 104, Epi.IN_PLACE_RESIDUAL, GemmTile.HTS128x128),
                Arguments.of(2000, 1032, 104, Epi.IN_PLACE_RESIDUAL, GemmTile.HTS128x256),
                // ping-pong: the consumer warpgroups alternate tiles (odd and even counts per CTA), k tiles fewer
                // than, equal to and more than the 6 stages (a turn then spans ring wraps), in place
                Arguments.of(4000, 1032, 104, Epi.BIAS_GELU_RESIDUAL, GemmTile.HTP128x128),
                Arguments.of(6000, 1032, 384, Epi.BIAS_GELU, GemmTile.HTP128x128),
                Arguments.of(6000, 1032, 568, Epi.BIAS_RESIDUAL, GemmTile.HTP128x128),
                Arguments.of(2000, 1032, 104, Epi.IN_PLACE_RESIDUAL, GemmTile.HTP128x128));
    }

    /**
     * The TMA pipeline finishes (no deadlock: the producer's expect_tx byte counts match what the copies bring, the
     * full / empty phases line up) on k-tile counts around its ring depths, ragged K (the last box half outside
     * the matrix), ~4 output tiles per CTA of an H200 and a single tile, each launch checked on a few rows.
     */
    @Test
    @Order(1)
    void tmaPipelineNeverHangs() {
        assumeTrue(GemmKernels.of(gpu.kernels).supports(GemmTile.HTS128x256), "Hopper GEMM tests skipped: the TMA pipeline needs"
                + " compute capability 9.0, " + gpu.context.info().describe() + " is not");
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            for (GemmTile tile : new GemmTile[] {GemmTile.HTS128x256, GemmTile.HTS128x128, GemmTile.HTP128x128}) {
                for (int kTiles : new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13}) {
                    sampledRowsMatch(tile.bm * 66 + 5, 8 * tile.bn, 64 * kTiles - 32, tile);
                    sampledRowsMatch(tile.bm - 27, tile.bn - 8, 64 * kTiles, tile);
                }
            }
        }, "the TMA GEMM pipeline did not finish within 120 s: a deadlock in its mbarrier protocol (gemm_sm90_tma.cuh)");
    }

    /** One launch of {@code tile} on random data, checked on 8 rows (first, last, random): for the hang check. */
    private void sampledRowsMatch(int m, int n, int k, GemmTile tile) {
        long mark = gpu.pool.mark();
        Random rnd = new Random(m * 31L + n * 7L + k);
        float[] a = GpuTestSupport.randomBf16(rnd, m * k, 1.0);
        float[] w = GpuTestSupport.randomBf16(rnd, n * k, 1.0 / Math.sqrt(k));
        float[] bias = GpuTestSupport.randomBf16(rnd, n, 0.5);
        DeviceBuffer dc = gpu.poisoned((long) m * n, "c");
        GemmKernels.of(gpu.kernels).run(gpu.stream, gpu.upload(a, "a"), gpu.upload(w, "w"), gpu.upload(bias, "bias"), null, dc, m, n,
                k, true, tile);
        float[] got = gpu.download(dc, m * n);
        int[] rows = GpuTestSupport.sampleRows(rnd, 8, m);
        float[] ref = ReferenceOps.gemmRows(a, w, bias, null, rows, n, k, true);
        float[] out = GpuTestSupport.gatherRows(got, rows, n);
        GpuTestSupport.assertClose(String.format("gemm %s m=%d n=%d k=%d (8 rows)", tile, m, n, k), ref, out, 0x1p-8,
                1e-3 * GpuTestSupport.rms(ref));
        gpu.pool.release(mark);
    }

    @ParameterizedTest(name = "m={0} n={1} k={2} {3} {4}")
    @MethodSource("hopperCases")
    void hopperMatchesReference(int m, int n, int k, Epi epi, GemmTile tile) {
        assumeTrue(GemmKernels.of(gpu.kernels).supports(tile), "Hopper GEMM tests skipped: " + tile + " needs compute capability 9.0, "
                + gpu.context.info().describe() + " is not");
        matchesReference(m, n, k, epi, tile);
    }

    /** Full-size rows of the vit_l / vit_h shapes (M = 4096 tokens, sampled rows) on both Hopper tiles. */
    @ParameterizedTest(name = "m=4096 n={0} k={1} gelu={2} {3}")
    @MethodSource("largeShapes")
    void hopperLargeShapesOnSampledRows(int n, int k, boolean gelu, GemmTile tile) {
        assumeTrue(GemmKernels.of(gpu.kernels).supports(tile), "Hopper GEMM tests skipped: " + tile + " needs compute capability 9.0, "
                + gpu.context.info().describe() + " is not");
        sampledRows(n, k, gelu, tile);
    }

    static Stream<Arguments> largeShapes() {
        List<Arguments> cases = new ArrayList<>();
        for (GemmTile tile : HOPPER_TILES) {
            cases.add(Arguments.of(2304, 768, false, tile));
            cases.add(Arguments.of(4096, 1024, true, tile));
            cases.add(Arguments.of(1280, 5120, false, tile));
        }
        return cases.stream();
    }

    /** The Hopper tiles run on compute capability 9.0 only; elsewhere a launch is refused in Java, naming why. */
    @Test
    void hopperTilesOnlyOnComputeCapability90() {
        DeviceInfo dev = gpu.context.info();
        boolean hopper = dev.ccMajor() == 9 && dev.ccMinor() == 0;
        assertEquals(hopper, GemmKernels.of(gpu.kernels).supports(GemmTile.H128x256));
        assertEquals(hopper, GemmKernels.of(gpu.kernels).supports(GemmTile.H128x128));
        assertEquals(hopper, GemmKernels.of(gpu.kernels).supports(GemmTile.HTS128x256));
        assertEquals(hopper, GemmKernels.of(gpu.kernels).supports(GemmTile.HTS128x128));
        assertEquals(hopper, GemmKernels.of(gpu.kernels).supports(GemmTile.HTP128x128));
        assertTrue(GemmKernels.of(gpu.kernels).supports(GemmTile.T128x128x64));
        if (!hopper) {
            long mark = gpu.pool.mark();
            DeviceBuffer a = gpu.poisoned(64, "a");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> GemmKernels.of(gpu.kernels).run(gpu.stream, a, a, null, null, a, 8, 8, 8, false, GemmTile.H128x256));
            assertTrue(e.getMessage().contains("compute capability 9.0"), e.getMessage());
            gpu.pool.release(mark);
        }
    }

    @Test
    void defaultTileIsTheHopperOneOnHopper() {
        boolean hopper = GemmKernels.of(gpu.kernels).supports(GemmTile.H128x256);
        assertEquals(hopper, GemmKernels.of(gpu.kernels).defaultTile(32 * 4096, 3072).hopper());
        assertEquals(hopper, GemmKernels.of(gpu.kernels).defaultTile(4096, 768).hopper());
        if (hopper && gpu.kernels.tmaAvailable()) {
            // ping-pong for short K without GELU; the cooperative TMA-store tile for GELU or long K
            assertEquals(GemmTile.HTP128x128, GemmKernels.of(gpu.kernels).defaultTile(32 * 4096, 2304, 768, false));
            assertEquals(GemmTile.HTP128x128, GemmKernels.of(gpu.kernels).defaultTile(4096, 768, 768, false));
            assertEquals(GemmTile.HTS128x256, GemmKernels.of(gpu.kernels).defaultTile(32 * 4096, 3072, 768, true));
            assertEquals(GemmTile.HTS128x256, GemmKernels.of(gpu.kernels).defaultTile(32 * 4096, 768, 3072, false));
        } else if (!hopper) {
            assertEquals(GemmTile.T128x128x64, GemmKernels.of(gpu.kernels).defaultTile(32 * 4096, 3072, 768, true));
        }
    }

    @ParameterizedTest(name = "m={0} n={1} k={2} {3} {4}")
    @MethodSource("cases")
    void matchesReference(int m, int n, int k, Epi epi, GemmTile tile) {
        long mark = gpu.pool.mark();
        Random rnd = new Random(31L * m + 7L * n + k + epi.ordinal());
        float[] a = GpuTestSupport.randomBf16(rnd, m * k, 1.0);
        float[] w = GpuTestSupport.randomBf16(rnd, n * k, 1.0 / Math.sqrt(k));
        boolean hasBias = epi != Epi.PLAIN && epi != Epi.IN_PLACE_RESIDUAL;
        boolean gelu = epi == Epi.BIAS_GELU || epi == Epi.BIAS_GELU_RESIDUAL;
        boolean hasRes = epi == Epi.BIAS_RESIDUAL || epi == Epi.BIAS_GELU_RESIDUAL || epi == Epi.IN_PLACE_RESIDUAL;
        float[] bias = hasBias ? GpuTestSupport.randomBf16(rnd, n, 0.5) : null;
        float[] res = hasRes ? GpuTestSupport.randomBf16(rnd, m * n, 1.0) : null;

        DeviceBuffer da = gpu.upload(a, "a"), dw = gpu.upload(w, "w");
        DeviceBuffer db = hasBias ? gpu.upload(bias, "bias") : null;
        GpuTestSupport.GuardedOutput guarded = gpu.guardedOutput(m * n, res, epi == Epi.IN_PLACE_RESIDUAL);
        DeviceBuffer dc = guarded.c(), dres = guarded.residual();

        GemmKernels.of(gpu.kernels).run(gpu.stream, da, dw, db, dres, dc, m, n, k, gelu, tile);
        float[] got = guarded.download(gpu);

        float[] ref = ReferenceOps.gemmRows(a, w, bias, res, ReferenceOps.allRows(m), n, k, gelu);
        float[] out = java.util.Arrays.copyOf(got, m * n);
        GpuTestSupport.assertClose(String.format("gemm %s m=%d n=%d k=%d %s", tile, m, n, k, epi), ref, out, 0x1p-8,
                1e-3 * GpuTestSupport.rms(ref));
        GpuTestSupport.assertWrittenExactly(String.format("gemm %s m=%d n=%d k=%d %s", tile, m, n, k, epi),
                got, m * n);
        gpu.pool.release(mark);
    }

    /** Full vit_b batch-1 shapes (M = 4096 tokens), the default tile; checked on 96 sampled rows. */
    @ParameterizedTest(name = "vit_b m=4096 n={0} k={1}")
    @MethodSource("vitbShapes")
    void vitbShapesOnSampledRows(int n, int k, boolean gelu) {
        sampledRows(n, k, gelu, GemmKernels.of(gpu.kernels).defaultTile(4096, n));
    }

    private void sampledRows(int n, int k, boolean gelu, GemmTile tile) {
        int m = 4096;
        long mark = gpu.pool.mark();
        Random rnd = new Random(n * 13L + k);
        float[] a = GpuTestSupport.randomBf16(rnd, m * k, 1.0);
        float[] w = GpuTestSupport.randomBf16(rnd, n * k, 1.0 / Math.sqrt(k));
        float[] bias = GpuTestSupport.randomBf16(rnd, n, 0.5);
        DeviceBuffer dc = gpu.poisoned((long) m * n, "c");
        GemmKernels.of(gpu.kernels).run(gpu.stream, gpu.upload(a, "a"), gpu.upload(w, "w"), gpu.upload(bias, "bias"), null, dc, m, n,
                k, gelu, tile);
        float[] got = gpu.download(dc, m * n);
        int[] rows = GpuTestSupport.sampleRows(rnd, 96, m);
        float[] ref = ReferenceOps.gemmRows(a, w, bias, null, rows, n, k, gelu);
        float[] out = GpuTestSupport.gatherRows(got, rows, n);
        GpuTestSupport.assertClose(String.format("gemm %s m=%d n=%d k=%d (96 rows)", tile, m,
                n, k), ref, out, 0x1p-8, 1e-3 * GpuTestSupport.rms(ref));
        for (float v : got) {
            assertTrue(!Float.isNaN(v), "an element of C was never written");
        }
        gpu.pool.release(mark);
    }

    static Stream<Arguments> vitbShapes() {
        return Stream.of(Arguments.of(2304, 768, false), Arguments.of(768, 768, false), Arguments.of(3072, 768, true),
                Arguments.of(768, 3072, false));
    }

    @Test
    void repeatedLaunchesAreDeterministic() {
        long mark = gpu.pool.mark();
        Random rnd = new Random(5);
        int m = 1000, n = 768, k = 768;
        DeviceBuffer a = gpu.upload(GpuTestSupport.randomBf16(rnd, m * k, 1), "a");
        DeviceBuffer w = gpu.upload(GpuTestSupport.randomBf16(rnd, n * k, 0.03), "w");
        DeviceBuffer c1 = gpu.poisoned((long) m * n, "c1"), c2 = gpu.poisoned((long) m * n, "c2");
        GemmKernels.of(gpu.kernels).run(gpu.stream, a, w, null, null, c1, m, n, k, false);
        GemmKernels.of(gpu.kernels).run(gpu.stream, a, w, null, null, c2, m, n, k, false);
        org.junit.jupiter.api.Assertions.assertArrayEquals(gpu.download(c1, m * n), gpu.download(c2, m * n));
        gpu.pool.release(mark);
    }
}
