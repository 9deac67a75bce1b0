package io.samstream.gpu.cuda.kernels;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ModelSparsity;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuSamBackend;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.GpuTestSupport;
import io.samstream.gpu.cuda.kernels.SparseGemmKernels.SparseTile;
import io.samstream.gpu.cuda.kernels.SparseGemmKernels.SparseWeight;
import io.samstream.gpu.cuda.sam.CudaSamBackend;
import io.samstream.gpu.cuda.sam.CudaSamOptions;
import io.samstream.gpu.model.RandomSamWeights;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.model.SamConfigInference;
import io.samstream.gpu.sparse.SparseEncoder;
import io.samstream.gpu.sparse.TwoFourPruning;
import io.samstream.gpu.sparse.TwoFourWeights;
import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The 2:4-sparse GEMM (gemm_sparse.cuh, mma.sp) against a double-precision reference on the pruned dense
 * weights (the exact sparse model), for every vit_b encoder shape with a ragged M, every epilogue, both
 * tiles and the padded edge cases (n not a multiple of 16 or of the tile, k not a multiple of 64); same
 * tolerance and NaN-poisoning as {@link GemmGpuTest}. Then the whole encoder with sparsity 2:4 on CUDA
 * against the CPU backend on the same pruned weights (embedding cosine >= 0.999).
 */
class SparseGemmGpuTest extends GpuTestBase {
    enum Epi { PLAIN, BIAS, BIAS_GELU, BIAS_RESIDUAL, BIAS_GELU_RESIDUAL, IN_PLACE_RESIDUAL }

    static Stream<Arguments> cases() {
        return Stream.of(
                // vit_b encoder linears, M = 300 (2 full tiles + 44 rows), the epilogue each uses in the encoder
                Arguments.of(300, 2304, 768, Epi.BIAS, SparseTile.S128x128),              // attn.qkv
                Arguments.of(300, 768, 768, Epi.IN_PLACE_RESIDUAL, SparseTile.S128x128),  // attn.proj (x += ...)
                Arguments.of(300, 768, 768, Epi.BIAS_RESIDUAL, SparseTile.S128x128),
                Arguments.of(300, 3072, 768, Epi.BIAS_GELU, SparseTile.S128x128),         // mlp.lin1
                Arguments.of(300, 768, 3072, Epi.BIAS_RESIDUAL, SparseTile.S128x128),     // mlp.lin2
                Arguments.of(300, 768, 3072, Epi.IN_PLACE_RESIDUAL, SparseTile.S128x128),
                // every epilogue
                Arguments.of(257, 768, 768, Epi.PLAIN, SparseTile.S128x128),
                Arguments.of(257, 768, 768, Epi.BIAS_GELU_RESIDUAL, SparseTile.S128x128),
                // padding: n = 8 (rows padded to 16), k = 40 / 104 / 1288 (padded to 64), tiny and ragged m
                Arguments.of(1, 8, 8, Epi.BIAS, SparseTile.S128x128),
                Arguments.of(1, 8, 40, Epi.BIAS_GELU_RESIDUAL, SparseTile.S128x128),
                Arguments.of(129, 136, 40, Epi.BIAS_GELU_RESIDUAL, SparseTile.S128x128),
                Arguments.of(129, 264, 104, Epi.BIAS_GELU_RESIDUAL, SparseTile.S128x128),
                Arguments.of(77, 24, 1288, Epi.PLAIN, SparseTile.S128x128),
                // SAM-family test models (widths 32 / 96 / 192)
                Arguments.of(1024, 96, 32, Epi.BIAS, SparseTile.S128x128),
                Arguments.of(1024, 192, 768, Epi.BIAS_RESIDUAL, SparseTile.S128x128));
    }

    @ParameterizedTest(name = "m={0} n={1} k={2} {3} {4}")
    @MethodSource("cases")
    void matchesReferenceOnThePrunedWeights(int m, int n, int k, Epi epi, SparseTile tile) {
        long mark = gpu.pool.mark();
        Random rnd = new Random(31L * m + 7L * n + k + epi.ordinal());
        float[] a = GpuTestSupport.randomBf16(rnd, m * k, 1.0);
        // Pruning after the bf16 rounding keeps the values bf16: the kernel and the reference see the same weights.
        float[] w = TwoFourPruning.prune(GpuTestSupport.randomBf16(rnd, n * k, 1.0 / Math.sqrt(k / 2.0)), n, k, "w");
        boolean hasBias = epi != Epi.PLAIN && epi != Epi.IN_PLACE_RESIDUAL;
        boolean gelu = epi == Epi.BIAS_GELU || epi == Epi.BIAS_GELU_RESIDUAL;
        boolean hasRes = epi == Epi.BIAS_RESIDUAL || epi == Epi.BIAS_GELU_RESIDUAL || epi == Epi.IN_PLACE_RESIDUAL;
        float[] bias = hasBias ? GpuTestSupport.randomBf16(rnd, n, 0.5) : null;
        float[] res = hasRes ? GpuTestSupport.randomBf16(rnd, m * n, 1.0) : null;

        DeviceBuffer da = gpu.upload(a, "a");
        SparseWeight sw = SparseWeightUpload.upload(TwoFourWeights.compress(w, n, k, "w"), gpu.pool, gpu.stream,
                gpu.staging, "w");
        DeviceBuffer db = hasBias ? gpu.upload(bias, "bias") : null;
        GpuTestSupport.GuardedOutput guarded = gpu.guardedOutput(m * n, res, epi == Epi.IN_PLACE_RESIDUAL);
        DeviceBuffer dc = guarded.c(), dres = guarded.residual();

        SparseGemmKernels.of(gpu.kernels).run(gpu.stream, da, sw, db, dres, dc, m, gelu, tile);
        float[] got = guarded.download(gpu);

        float[] ref = ReferenceOps.gemmRows(a, w, bias, res, ReferenceOps.allRows(m), n, k, gelu);
        float[] out = Arrays.copyOf(got, m * n);
        GpuTestSupport.assertClose(String.format("gemmSparse %s m=%d n=%d k=%d %s", tile, m, n, k, epi), ref, out,
                0x1p-8, 1e-3 * GpuTestSupport.rms(ref));
        GpuTestSupport.assertWrittenExactly(String.format("gemmSparse %s m=%d n=%d k=%d %s", tile, m, n, k, epi),
                got, m * n);
        gpu.pool.release(mark);
    }

    /** vit_b batch-1 shapes (M = 4096), the default sparse tile; 64 sampled rows; every element written. */
    @ParameterizedTest(name = "vit_b m=4096 n={0} k={1}")
    @MethodSource("vitbShapes")
    void vitbShapesOnSampledRows(int n, int k, boolean gelu) {
        int m = 4096;
        long mark = gpu.pool.mark();
        Random rnd = new Random(n * 13L + k);
        float[] a = GpuTestSupport.randomBf16(rnd, m * k, 1.0);
        float[] w = TwoFourPruning.prune(GpuTestSupport.randomBf16(rnd, n * k, 1.0 / Math.sqrt(k / 2.0)), n, k, "w");
        float[] bias = GpuTestSupport.randomBf16(rnd, n, 0.5);
        SparseWeight sw = SparseWeightUpload.upload(TwoFourWeights.compress(w, n, k, "w"), gpu.pool, gpu.stream,
                gpu.staging, "w");
        DeviceBuffer dc = gpu.poisoned((long) m * n, "c");
        SparseGemmKernels.of(gpu.kernels).run(gpu.stream, gpu.upload(a, "a"), sw, gpu.upload(bias, "bias"), null, dc, m, gelu,
                SparseGemmKernels.of(gpu.kernels).defaultTile(m, n));
        float[] got = gpu.download(dc, m * n);
        int[] rows = GpuTestSupport.sampleRows(rnd, 64, m);
        float[] ref = ReferenceOps.gemmRows(a, w, bias, null, rows, n, k, gelu);
        float[] out = GpuTestSupport.gatherRows(got, rows, n);
        GpuTestSupport.assertClose(String.format("gemmSparse m=%d n=%d k=%d (64 rows)", m, n, k), ref, out, 0x1p-8,
                1e-3 * GpuTestSupport.rms(ref));
        for (float v : got) {
            assertTrue(!Float.isNaN(v), "an element of C was never written");
        }
        gpu.pool.release(mark);
    }

    static Stream<Arguments> vitbShapes() {
        return Stream.of(Arguments.of(2304, 768, false), Arguments.of(768, 768, false), Arguments.of(3072, 768, true),
                Arguments.of(768, 3072, false));
    }

    /**
     * The metadata register layout (TwoFourWeights' class doc: lanes t = 0, 1 of a quad hold k 16t..16t+15, row
     * g in the low half, g + 8 in the high half). Should the kernel disagree with the reference, this tells
     * which of the other plausible layouts the hardware reads instead, so the fix is one line in
     * TwoFourWeights.wordIndex / shift rather than a search.
     */
    @Test
    void metadataLayoutIsTheOneTheTensorCoresRead() {
        long mark = gpu.pool.mark();
        int m = 64, n = 16, k = 64;
        Random rnd = new Random(99);
        float[] a = GpuTestSupport.randomBf16(rnd, m * k, 1.0);
        float[] w = TwoFourPruning.prune(GpuTestSupport.randomBf16(rnd, n * k, 0.2), n, k, "w");
        float[] ref = ReferenceOps.gemmRows(a, w, null, null, ReferenceOps.allRows(m), n, k, false);
        TwoFourWeights tw = TwoFourWeights.compress(w, n, k, "w");
        DeviceBuffer da = gpu.upload(a, "a");
        String[] names = {"documented (t = k half, row g low / g+8 high)", "t = row half, 32 k in one word",
            "t = k half, row g high / g+8 low"};
        StringBuilder report = new StringBuilder();
        boolean documentedOk = false;
        for (int layout = 0; layout < names.length; layout++) {
            int[] meta = new int[tw.metadata().length];
            for (int r = 0; r < n; r++) {
                for (int c = 0; c < k / 4; c++) {
                    int code = (tw.metadata()[documentedWord(r, c, k / 32)] >>> documentedShift(r, c)) & 0xF;
                    int g = r % 8, step = c / 8, cc = c % 8;
                    int t = layout == 1 ? (r >= 8 ? 1 : 0) : cc / 4;
                    int shift = switch (layout) {
                        case 0 -> (r >= 8 ? 16 : 0) + 4 * (cc % 4);
                        case 1 -> 4 * cc;
                        default -> (r >= 8 ? 0 : 16) + 4 * (cc % 4);
                    };
                    meta[step * 16 + 2 * g + t] |= code << shift;
                }
            }
            if (layout == 0) {
                org.junit.jupiter.api.Assertions.assertArrayEquals(tw.metadata(), meta, "test's re-encoding of layout 0");
            }
            DeviceBuffer dm = gpu.pool.allocate((long) meta.length * 4, "meta");
            java.nio.ByteBuffer buf = gpu.staging.buffer();
            for (int v : meta) {
                buf.putInt(v);
            }
            gpu.stream.upload(gpu.staging, 0, dm, 0, (long) meta.length * 4);
            gpu.stream.synchronize();
            SparseWeight sw = SparseWeightUpload.upload(tw, gpu.pool, gpu.stream, gpu.staging, "w");
            SparseWeight candidate = new SparseWeight(sw.values(), dm, n, k);
            DeviceBuffer dc = gpu.poisoned((long) m * n, "c");
            SparseGemmKernels.of(gpu.kernels).run(gpu.stream, da, candidate, null, null, dc, m, false, SparseTile.S128x128);
            float[] got = gpu.download(dc, m * n);
            double worst = 0;
            for (int i = 0; i < ref.length; i++) {
                worst = Math.max(worst, Math.abs(ref[i] - got[i]) / (0x1p-8 * Math.abs(ref[i]) + 1e-3 * GpuTestSupport.rms(ref)));
            }
            report.append(String.format(Locale.ROOT, "%n  layout %d (%s): worst error / tolerance %.2f", layout,
                    names[layout], worst));
            if (layout == 0) {
                documentedOk = worst <= 1;
            }
        }
        System.out.println("mma.sp metadata layouts:" + report);
        assertTrue(documentedOk, "the tensor cores do not read the documented metadata layout:" + report);
        gpu.pool.release(mark);
    }

    private static int documentedWord(int r, int c, int steps) {
        return ((r / 16) * steps + c / 8) * 16 + 2 * (r % 8) + (c % 8) / 4;
    }

    private static int documentedShift(int r, int c) {
        return ((r % 16) >= 8 ? 16 : 0) + 4 * (c % 4);
    }

    @Test
    void wrongSizesAreRefusedBeforeLaunch() {
        long mark = gpu.pool.mark();
        float[] w = TwoFourPruning.prune(new float[64 * 64], 64, 64, "w");
        SparseWeight sw = SparseWeightUpload.upload(TwoFourWeights.compress(w, 64, 64, "w"), gpu.pool, gpu.stream,
                gpu.staging, "w");
        DeviceBuffer a = gpu.poisoned(10 * 64, "a"), c = gpu.poisoned(10 * 64, "c");
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> SparseGemmKernels.of(gpu.kernels).run(gpu.stream, a, sw, null, null, c, 11, false, SparseTile.S128x128));
        assertTrue(e.getMessage().contains("gemmSparse m=11") && e.getMessage().contains("a needs 704"), e.getMessage());
        SparseWeight truncated = new SparseWeight(sw.values(), sw.metadata().slice(0, 64, "meta"), 64, 64);
        e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> SparseGemmKernels.of(gpu.kernels).run(gpu.stream, a, truncated, null, null, c, 10, false, SparseTile.S128x128));
        assertTrue(e.getMessage().contains("metadata"), e.getMessage());
        gpu.pool.release(mark);
    }

    /**
     * The whole encoder, sparsity 2:4 on every encoder linear: CUDA (sparse tensor cores) against the CPU
     * backend on the same pruned weights. A vit_b-shaped random model at 512 px (every vit_b GEMM shape, M
     * 1024), and the tiny256 fixture (widths 32 / 96 / 128: padded k and n).
     */
    @Test
    void sparseEncoderMatchesTheCpuOnThePrunedWeights() throws Exception {
        ModelSparsity all = new ModelSparsity(true, ModelSparsity.Layers.ALL);
        SamConfig vitb = new SamConfig(512, 16, 768, 12, 12, 3072, 14, new int[] {2, 5, 8, 11}, 256, 16, 2, 8, 2048,
                2, 3, 3, 256);
        compareEncoder("vit_b-shaped random, 512 px", RandomSamWeights.stateDict(vitb, 3), vitb, all);
        Path tiny = Path.of(System.getProperty("samstream.fixtures", "src/test/resources/fixtures"))
                .resolve("tiny256").resolve("model.pth");
        StateDict tw = CheckpointLoader.load(tiny);
        compareEncoder("tiny256 fixture, mlp only", tw, SamConfigInference.infer(tw),
                new ModelSparsity(true, ModelSparsity.Layers.MLP));
    }

    private static void compareEncoder(String what, StateDict dense, SamConfig config, ModelSparsity sparsity) {
        StateDict pruned = SparseEncoder.apply(dense, sparsity);
        int s = config.imageSize();
        SplittableRandom r = new SplittableRandom(11);
        float[] v = new float[3 * s * s];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) (r.nextDouble() * 4 - 2);
        }
        Tensor image = new Tensor(v, 1, 3, s, s);
        Tensor want;
        try (CpuSamBackend cpu = new CpuSamBackend(pruned, config, Runtime.getRuntime().availableProcessors())) {
            want = cpu.encode(image);
        }
        Tensor got, denseGot;
        try (CudaSamBackend cuda = new CudaSamBackend(pruned, config,
                CudaSamOptions.builder(1).sparsity(sparsity).build())) {
            assertTrue(cuda.name().contains("2:4"), cuda.name());
            got = cuda.encode(image);
        }
        try (CudaSamBackend cuda = new CudaSamBackend(dense, config, CudaSamOptions.of(1))) {
            denseGot = cuda.encode(image);
        }
        assertArrayEquals(want.shape(), got.shape());
        double cos = cosine(want.data(), got.data()), cosDense = cosine(want.data(), denseGot.data());
        String report = String.format(Locale.ROOT, "%s, %s: cuda sparse vs cpu pruned cosine %.6f (dense cuda vs"
                + " cpu pruned: %.6f)", what, sparsity.describe(), cos, cosDense);
        System.out.println(report);
        assertTrue(cos >= 0.999, report);
        assertTrue(cosDense < cos, "the sparse path must be what made the difference: " + report);
    }

    static double cosine(float[] a, float[] b) {
        double dot = 0, na = 0, nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += (double) a[i] * b[i];
            na += (double) a[i] * a[i];
            nb += (double) b[i] * b[i];
        }
        return dot / Math.sqrt(na * nb);
    }
}
