package io.samstream.gpu.cuda.kernels;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
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
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.GpuTestSupport;
import io.samstream.gpu.cuda.kernels.Fp8GemmKernels.Fp8Tile;
import io.samstream.gpu.cuda.kernels.Fp8GemmKernels.Fp8Weight;
import io.samstream.gpu.fp8.Fp8Rows;

/**
 * The FP8 (e4m3) GEMM and its quantize kernels:
 * <ul>
 *   <li>the quantize kernels against {@link Fp8Rows} (the same fp32 arithmetic: the very bytes and scales);</li>
 *   <li>the GEMM against a double-precision reference on the same quantized operands: the products of e4m3 values are
 *       exact, so only the fp32 accumulation order and the one rounding to bf16 differ (2^-8 |ref| + 1e-3 rms, as
 *       the bf16 GEMM's test), every tile, the vit_b shapes, ragged M / N / K, every epilogue, persistent walks;</li>
 *   <li>the FP8 path end to end (device quantization of the activations, weights quantized at load) against the
 *       bf16 GEMM on the unquantized operands: the quantization error only (relative L2 below 6 %, cosine above
 *       0.998 on Gaussian data; e4m3 keeps 3 mantissa bits).</li>
 * </ul>
 * The pipeline hang check runs first. The GEMM runs on compute capability 9.0 only; its tests skip elsewhere, saying
 * so, and a launch there is refused naming the GPU.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class Fp8GemmGpuTest extends GpuTestBase {
    enum Epi { PLAIN, BIAS, BIAS_GELU, BIAS_RESIDUAL, BIAS_GELU_RESIDUAL, IN_PLACE_RESIDUAL }

    private static Fp8GemmKernels fp8() {
        return Fp8GemmKernels.of(gpu.kernels);
    }

    private static void assumeFp8Gemm() {
        String why = fp8().gemmUnavailable();
        assumeTrue(why == null, "FP8 GEMM tests skipped: " + why);
    }

    /** The e4m3 pipeline finishes around its ring depths (k tiles of 128), ragged K, several tiles per CTA. */
    @Test
    @Order(1)
    void pipelineNeverHangs() {
        assumeFp8Gemm();
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            for (Fp8Tile tile : Fp8Tile.values()) {
                for (int kTiles : new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13}) {
                    matches(tile.bm * 66 + 5, 8 * tile.bn, 128 * kTiles - 48, Epi.BIAS_GELU, tile, 8);
                    matches(tile.bm - 27, tile.bn - 8, 128 * kTiles, Epi.BIAS, tile, 8);
                }
            }
        }, "the FP8 GEMM pipeline did not finish within 120 s: a deadlock in its mbarrier protocol (gemm_sm90_tma.cuh)");
    }

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        for (Fp8Tile tile : Fp8Tile.values()) {
            cases.add(Arguments.of(300, 2304, 768, Epi.BIAS, tile));                 // vit_b qkv, ragged M
            cases.add(Arguments.of(300, 3072, 768, Epi.BIAS_GELU, tile));            // vit_b lin1
            cases.add(Arguments.of(300, 768, 3072, Epi.BIAS_RESIDUAL, tile));        // vit_b lin2
            cases.add(Arguments.of(257, 768, 768, Epi.IN_PLACE_RESIDUAL, tile));     // vit_b proj, in place
            cases.add(Arguments.of(130, 1024, 4096, Epi.BIAS_GELU_RESIDUAL, tile));  // vit_l lin2 (+GELU too)
            cases.add(Arguments.of(65, 5120, 1280, Epi.BIAS_GELU, tile));            // vit_h lin1
            cases.add(Arguments.of(1, 8, 16, Epi.BIAS, tile));
            cases.add(Arguments.of(129, 136, 48, Epi.BIAS_GELU_RESIDUAL, tile));
            cases.add(Arguments.of(129, 264, 208, Epi.PLAIN, tile));
            cases.add(Arguments.of(77, 24, 1296, Epi.PLAIN, tile));
            // persistent CTAs walking several tiles, ragged everything, in place
            cases.add(Arguments.of(4000, 1032, 112, Epi.BIAS_GELU_RESIDUAL, tile));
            cases.add(Arguments.of(6000, 1032, 1168, Epi.BIAS_RESIDUAL, tile));
            cases.add(Arguments.of(2000, 1032, 112, Epi.IN_PLACE_RESIDUAL, tile));
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "m={0} n={1} k={2} {3} {4}")
    @MethodSource("cases")
    void matchesReferenceOnTheQuantizedOperands(int m, int n, int k, Epi epi, Fp8Tile tile) {
        assumeFp8Gemm();
        matches(m, n, k, epi, tile, 0);
    }

    /** Full vit_b batch-1 shapes (M = 4096 tokens) on the default tile, 96 sampled rows. */
    @ParameterizedTest(name = "vit_b m=4096 n={0} k={1} gelu={2}")
    @MethodSource("vitbShapes")
    void vitbShapesOnSampledRows(int n, int k, boolean gelu) {
        assumeFp8Gemm();
        matches(4096, n, k, gelu ? Epi.BIAS_GELU : Epi.BIAS, fp8().defaultTile(4096, n, k, gelu), 96);
    }

    static Stream<Arguments> vitbShapes() {
        return Stream.of(Arguments.of(2304, 768, false), Arguments.of(768, 768, false), Arguments.of(3072, 768, true),
                Arguments.of(768, 3072, false));
    }

    /**
     * One launch on random operands quantized on the host, against the double reference on the values the bytes
     * stand for; {@code sampled} > 0 checks that many rows (first, last, random), else all, plus a NaN guard band
     * past C.
     */
    private void matches(int m, int n, int k, Epi epi, Fp8Tile tile, int sampled) {
        long mark = gpu.pool.mark();
        Random rnd = new Random(31L * m + 7L * n + k + epi.ordinal());
        Fp8Rows qa = Fp8Rows.quantize(GpuTestSupport.randomBf16(rnd, m * k, 1.0), m, k);
        Fp8Rows qw = Fp8Rows.quantizeWeight(GpuTestSupport.randomBf16(rnd, n * k, 1.0 / Math.sqrt(k)), n, k, "w");
        boolean hasBias = epi != Epi.PLAIN && epi != Epi.IN_PLACE_RESIDUAL;
        boolean gelu = epi == Epi.BIAS_GELU || epi == Epi.BIAS_GELU_RESIDUAL;
        boolean hasRes = epi == Epi.BIAS_RESIDUAL || epi == Epi.BIAS_GELU_RESIDUAL || epi == Epi.IN_PLACE_RESIDUAL;
        float[] bias = hasBias ? GpuTestSupport.randomBf16(rnd, n, 0.5) : null;
        float[] res = hasRes ? GpuTestSupport.randomBf16(rnd, m * n, 1.0) : null;

        GpuTestSupport.GuardedOutput guarded = gpu.guardedOutput(m * n, res, epi == Epi.IN_PLACE_RESIDUAL);
        DeviceBuffer dc = guarded.c(), dres = guarded.residual();
        Fp8Weight w = new Fp8Weight(gpu.uploadBytes(qw.values(), "w"), gpu.uploadF32(qw.scales(), "w scales"), n, k);
        fp8().run(gpu.stream, gpu.uploadBytes(qa.values(), "qa"), gpu.uploadF32(qa.scales(), "qa scales"), w,
                hasBias ? gpu.upload(bias, "bias") : null, dres, dc, m, gelu, tile);
        float[] got = guarded.download(gpu);

        int[] rows = sampled > 0 ? GpuTestSupport.sampleRows(rnd, sampled, m) : ReferenceOps.allRows(m);
        float[] ref = ReferenceOps.gemmRows(qa.dequantize(), qw.dequantize(), bias, res, rows, n, k, gelu);
        String what = String.format("gemmE4m3 %s m=%d n=%d k=%d %s%s", tile, m, n, k, epi,
                sampled > 0 ? " (" + sampled + " rows)" : "");
        // Hopper's e4m3 wgmma keeps fewer bits than fp32 in its accumulator, and this GEMM sums all of k in it: the
        // error of an element grows with k (H100, 2026-12-05: worst 0.24 % of the rms at k = 768, 1.1 % at 4096, in
        // a few hundred of 10^5 values), hence 2^-7 relative + (1e-3 + k 2^-17) rms per element. The whole product
        // stays at bf16's output rounding (relative L2 1.66e-3 to 1.94e-3), which a layout or scale error would not.
        double rms = GpuTestSupport.rms(ref);
        double relL2 = GpuTestSupport.assertClose(what, ref, GpuTestSupport.gatherRows(got, rows, n), 0x1p-7,
                (1e-3 + k * 0x1p-17) * rms);
        assertTrue(relL2 < 2.5e-3, what + ": relative L2 " + relL2);
        GpuTestSupport.assertWrittenExactly(what, got, m * n);
        gpu.pool.release(mark);
    }

    /**
     * The quantize kernel writes exactly {@link Fp8Rows#quantize}'s bytes and scales: the encoders' widths and the
     * narrowest and widest rows, with a row of zeros, an outlier row and values past e4m3's range after scaling.
     */
    @ParameterizedTest(name = "rows={0} c={1}")
    @MethodSource("quantizeShapes")
    void quantizeWritesTheHostBytes(int rows, int c) {
        long mark = gpu.pool.mark();
        Random rnd = new Random(rows * 31L + c);
        float[] x = GpuTestSupport.randomBf16(rnd, rows * c, 2.0);
        Arrays.fill(x, 0, c, 0f);                                   // row 0: zeros
        if (rows > 2) {
            x[2 * c + c / 2] = 30720f;                              // row 2: one outlier (bf16-exact)
            x[2 * c + 1] = 1e-30f;                                  // and a value far below its smallest step
        }
        DeviceBuffer q = gpu.pool.allocate((long) rows * c, "q"), s = gpu.pool.allocate(rows * 4L, "scales");
        fp8().quantize(gpu.stream, gpu.upload(x, "x"), q, s, rows, c);
        Fp8Rows ref = Fp8Rows.quantize(x, rows, c);
        assertArrayEquals(ref.scales(), gpu.downloadF32(s, rows), "scales");
        assertArrayEquals(ref.values(), gpu.downloadBytes(q, rows * c), "e4m3 bytes");
        gpu.pool.release(mark);
    }

    static Stream<Arguments> quantizeShapes() {
        return Stream.of(Arguments.of(300, 768), Arguments.of(37, 3072), Arguments.of(9, 8), Arguments.of(17, 264),
                Arguments.of(5, 5120), Arguments.of(4096, 1024));
    }

    /**
     * LayerNorm + quantize against the double LayerNorm: the scales within fp32 noise of max|y| / 448, every value the
     * bytes stand for within half an e4m3 step of y (plus fp32 noise).
     */
    @ParameterizedTest(name = "rows={0} c={1}")
    @MethodSource("layerNormShapes")
    void layerNormQuantizeMatchesTheDoubleLayerNorm(int rows, int c) {
        long mark = gpu.pool.mark();
        Random rnd = new Random(rows * 17L + c);
        float[] x = GpuTestSupport.randomBf16(rnd, rows * c, 3.0);
        float[] gamma = GpuTestSupport.randomBf16(rnd, c, 1.0), beta = GpuTestSupport.randomBf16(rnd, c, 0.3);
        DeviceBuffer q = gpu.pool.allocate((long) rows * c, "q"), s = gpu.pool.allocate(rows * 4L, "scales");
        fp8().layerNormQuantize(gpu.stream, gpu.upload(x, "x"), gpu.upload(gamma, "gamma"), gpu.upload(beta, "beta"),
                q, s, rows, c, 1e-6f);
        float[] y = ReferenceOps.layerNorm(x, null, gamma, beta, rows, c, 1e-6);
        Fp8Rows got = new Fp8Rows(gpu.downloadBytes(q, rows * c), gpu.downloadF32(s, rows), rows, c);
        for (int r = 0; r < rows; r++) {
            double amax = 0;
            for (int i = 0; i < c; i++) {
                amax = Math.max(amax, Math.abs(y[r * c + i]));
            }
            assertEquals(amax / 448, got.scales()[r], amax / 448 * 1e-4, "scale of row " + r);
            for (int i = 0; i < c; i++) {
                double v = y[r * c + i], bound = Math.abs(v) / 16 + got.scales()[r] * 0x1p-9 + amax * 1e-4;
                assertTrue(Math.abs(got.value(r, i) - v) <= bound, "row " + r + " col " + i + ": " + v + " -> "
                        + got.value(r, i));
            }
        }
        gpu.pool.release(mark);
    }

    static Stream<Arguments> layerNormShapes() {
        return Stream.of(Arguments.of(300, 768), Arguments.of(33, 256), Arguments.of(9, 1280), Arguments.of(5, 1024));
    }

    /**
     * The FP8 path as the encoder runs it (activations quantized on the device, weights at load) against the bf16
     * GEMM on the unquantized bf16 operands: vit_b's four Linears at M = 4096.
     */
    @ParameterizedTest(name = "vit_b m=4096 n={0} k={1} gelu={2}")
    @MethodSource("vitbShapes")
    void closeToTheBf16Gemm(int n, int k, boolean gelu) {
        assumeFp8Gemm();
        long mark = gpu.pool.mark();
        int m = 4096;
        Random rnd = new Random(n * 5L + k);
        float[] a = GpuTestSupport.randomBf16(rnd, m * k, 1.0), w = GpuTestSupport.randomBf16(rnd, n * k, 1 / Math.sqrt(k));
        float[] bias = GpuTestSupport.randomBf16(rnd, n, 0.1);
        DeviceBuffer da = gpu.upload(a, "a"), db = gpu.upload(bias, "bias");
        DeviceBuffer c16 = gpu.poisoned((long) m * n, "c bf16"), c8 = gpu.poisoned((long) m * n, "c fp8");
        GemmKernels.of(gpu.kernels).run(gpu.stream, da, gpu.upload(w, "w"), db, null, c16, m, n, k, gelu);
        DeviceBuffer qa = gpu.pool.allocate((long) m * k, "qa"), sa = gpu.pool.allocate(m * 4L, "qa scales");
        fp8().quantize(gpu.stream, da, qa, sa, m, k);
        Fp8Weight qw = Fp8WeightUpload.upload(w, n, k, gpu.pool, gpu.stream, gpu.staging, "w");
        fp8().run(gpu.stream, qa, sa, qw, db, null, c8, m, gelu);
        float[] ref = gpu.download(c16, m * n), got = gpu.download(c8, m * n);
        double dot = 0, rr = 0, gg = 0, err = 0;
        for (int i = 0; i < ref.length; i++) {
            dot += (double) ref[i] * got[i];
            rr += (double) ref[i] * ref[i];
            gg += (double) got[i] * got[i];
            err += ((double) got[i] - ref[i]) * ((double) got[i] - ref[i]);
        }
        double cosine = dot / Math.sqrt(rr * gg), rel = Math.sqrt(err / rr);
        System.out.printf("fp8 vs bf16 gemm m=%d n=%d k=%d gelu=%b: cosine %.6f, relative L2 %.4f%n", m, n, k, gelu,
                cosine, rel);
        assertTrue(cosine > 0.998 && rel < 0.06, "fp8 vs bf16: cosine " + cosine + ", relative L2 " + rel);
        gpu.pool.release(mark);
    }

    /** Repeated launches give the same bits (no race in the ring or the staging buffers). */
    @Test
    void repeatedLaunchesAreDeterministic() {
        assumeFp8Gemm();
        long mark = gpu.pool.mark();
        Random rnd = new Random(5);
        int m = 1000, n = 768, k = 768;
        Fp8Rows qa = Fp8Rows.quantize(GpuTestSupport.randomBf16(rnd, m * k, 1), m, k);
        Fp8Rows qw = Fp8Rows.quantize(GpuTestSupport.randomBf16(rnd, n * k, 0.03), n, k);
        DeviceBuffer a = gpu.uploadBytes(qa.values(), "qa"), sa = gpu.uploadF32(qa.scales(), "sa");
        Fp8Weight w = new Fp8Weight(gpu.uploadBytes(qw.values(), "w"), gpu.uploadF32(qw.scales(), "sw"), n, k);
        for (Fp8Tile tile : Fp8Tile.values()) {
            DeviceBuffer c1 = gpu.poisoned((long) m * n, "c1"), c2 = gpu.poisoned((long) m * n, "c2");
            fp8().run(gpu.stream, a, sa, w, null, null, c1, m, false, tile);
            fp8().run(gpu.stream, a, sa, w, null, null, c2, m, false, tile);
            assertArrayEquals(gpu.download(c1, m * n), gpu.download(c2, m * n), tile.toString());
        }
        gpu.pool.release(mark);
    }

    /** Short K without GELU ping-pongs (K counted in bf16-equivalent k tiles); GELU takes the cooperative tile. */
    @Test
    void defaultTiles() {
        assertEquals(Fp8Tile.HTP128x128, fp8().defaultTile(32 * 4096, 2304, 768, false));
        assertEquals(Fp8Tile.HTP128x128, fp8().defaultTile(32 * 4096, 768, 3072, false));
        assertTrue(fp8().defaultTile(32 * 4096, 3072, 768, true) != Fp8Tile.HTP128x128);
    }

    /** Without compute capability 9.0 a launch is refused in Java, naming the GPU; bad shapes everywhere. */
    @Test
    void refusesWhatItCannotRun() {
        long mark = gpu.pool.mark();
        DeviceBuffer b = gpu.pool.allocate(1 << 16, "b");
        Fp8Weight w = new Fp8Weight(b, b, 8, 24);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> fp8().run(gpu.stream, b, b, w, null, null, b, 8, false, Fp8Tile.HTS128x128));
        assertTrue(e.getMessage().contains(fp8().gemmRuns() ? "k must be a multiple of 16" : "compute capability 9.0"),
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> fp8().quantize(gpu.stream, b, b, b, 4, 12));
        assertTrue(e.getMessage().contains("multiple of 8"), e.getMessage());
        gpu.pool.release(mark);
    }
}
