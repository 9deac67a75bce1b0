package io.samstream.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;

import io.samstream.gpu.cuda.Bf16;
import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaEvent;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.kernels.AttentionKernels;
import io.samstream.gpu.cuda.kernels.GemmKernels.GemmTile;
import io.samstream.gpu.cuda.kernels.GemmKernels;
import io.samstream.gpu.cuda.kernels.NormKernels;
import io.samstream.gpu.cuda.kernels.Fp8GemmKernels;
import io.samstream.gpu.cuda.kernels.Fp8GemmKernels.Fp8Tile;
import io.samstream.gpu.cuda.kernels.Fp8GemmKernels.Fp8Weight;
import io.samstream.gpu.cuda.kernels.Fp8WeightUpload;
import io.samstream.gpu.cuda.kernels.SparseGemmKernels.SparseTile;
import io.samstream.gpu.cuda.kernels.SparseGemmKernels.SparseWeight;
import io.samstream.gpu.cuda.kernels.SparseGemmKernels;
import io.samstream.gpu.cuda.kernels.SparseWeightUpload;
import io.samstream.gpu.sparse.TwoFourPruning;
import io.samstream.gpu.sparse.TwoFourWeights;

/**
 * Times the CUDA kernels at SAM image-encoder shapes (vit_b, and vit_h's head dim 80 for attention):
 * GEMM at batch 32 (M = 32 x 4096 tokens), attention at batch 8, LayerNorm at batch 32. Random bf16
 * data (never zeros), warm-up launches first, then the median of per-launch CUDA-event timings.
 *
 * <pre>java -cp ... io.samstream.bench.CudaKernelBench OUT.tsv [repeats [FILTER]]</pre>
 *
 * FILTER (a substring of "op variant", e.g. "attention vit_b global", or "re:" and a regular expression found in
 * it, e.g. "re:gemm .*H" for the Hopper GEMM rows only) runs only the matching measurements: for profiling one
 * kernel under ncu, or one comparison.
 *
 * Writes one TSV line per measurement (op, variant, shape, ms, TFLOP/s or GB/s); bench/torch_kernels.py
 * measures PyTorch on the same shapes and writes the combined table to bench/results/.
 */
public final class CudaKernelBench {
    private static final int TOKENS = 64 * 64;

    private final CudaContext ctx;
    private final CudaKernels kernels;
    private final GemmKernels gemm;
    private final SparseGemmKernels sparseGemm;
    private final Fp8GemmKernels fp8Gemm;
    private final AttentionKernels attention;
    private final NormKernels norm;
    private final DeviceMemoryPool pool;
    private final CudaStream stream;
    private final int repeats;
    private final String filter;
    private final List<String> rows = new ArrayList<>();

    private CudaKernelBench(CudaContext ctx, int repeats, String filter) {
        this.ctx = ctx;
        this.kernels = new CudaKernels(ctx);
        this.gemm = GemmKernels.of(kernels);
        this.sparseGemm = SparseGemmKernels.of(kernels);
        this.fp8Gemm = Fp8GemmKernels.of(kernels);
        this.attention = AttentionKernels.of(kernels);
        this.norm = NormKernels.of(kernels);
        this.pool = new DeviceMemoryPool(ctx, 8L << 30);
        this.stream = new CudaStream(ctx);
        this.repeats = repeats;
        this.filter = filter;
    }

    private boolean wanted(String op, String variant) {
        if (filter == null) {
            return true;
        }
        String name = op + " " + variant;
        return filter.startsWith("re:") ? java.util.regex.Pattern.compile(filter.substring(3)).matcher(name).find()
                : name.contains(filter);
    }

    public static void main(String[] args) throws IOException {
        Path out = Path.of(args.length > 0 ? args[0] : "cuda-bench.tsv");
        int repeats = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        String filter = args.length > 2 ? args[2] : null;
        try (CudaContext ctx = CudaContext.open(0)) {
            CudaKernelBench b = new CudaKernelBench(ctx, repeats, filter);
            System.out.println(b.kernels.describe());
            b.gemms();
            b.sparseGemms();
            b.fp8Gemms();
            b.attention();
            b.layerNorm();
            try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out))) {
                w.println("device\t" + ctx.info().describe());
                b.rows.forEach(w::println);
            }
            System.out.println("wrote " + out);
        }
    }

    // ---- GEMM ---------------------------------------------------------------------------------------

    private void gemms() {
        int m = 32 * TOKENS;
        DeviceBuffer a = random(m * 5120L, 1.0, "A");
        DeviceBuffer c = random(m * 5120L, 1.0, "C");
        String[][] shapes = {
            // name, n, k, epilogue, rows (M); vit_b at batch 32 with every tile, the rest with T128x128x64 and the Hopper tiles
            {"qkv", "2304", "768", "bias", "" + m},
            {"proj", "768", "768", "bias+residual", "" + m},
            {"mlp.lin1", "3072", "768", "bias+gelu", "" + m},
            {"mlp.lin2", "768", "3072", "bias+residual", "" + m},
            {"b1 qkv", "2304", "768", "bias", "" + TOKENS},
            {"b1 proj", "768", "768", "bias+residual", "" + TOKENS},
            {"b1 mlp.lin1", "3072", "768", "bias+gelu", "" + TOKENS},
            {"b1 mlp.lin2", "768", "3072", "bias+residual", "" + TOKENS},
            {"neck 3x3", "256", "2304", "none", "" + m},
            {"vit_l qkv", "3072", "1024", "bias", "" + m},
            {"vit_l mlp.lin1", "4096", "1024", "bias+gelu", "" + m},
            {"vit_l mlp.lin2", "1024", "4096", "bias+residual", "" + m},
            {"vit_h qkv", "3840", "1280", "bias", "" + m},
            {"vit_h proj", "1280", "1280", "bias+residual", "" + m},
            {"vit_h mlp.lin1", "5120", "1280", "bias+gelu", "" + m},
            {"vit_h mlp.lin2", "1280", "5120", "bias+residual", "" + m},
        };
        for (String[] s : shapes) {
            int n = Integer.parseInt(s[1]), k = Integer.parseInt(s[2]), rows = Integer.parseInt(s[4]);
            long mark = pool.mark();
            DeviceBuffer w = random((long) n * k, 1.0 / Math.sqrt(k), "W");
            DeviceBuffer bias = s[3].contains("bias") ? random(n, 0.5, "bias") : null;
            boolean gelu = s[3].contains("gelu"), residual = s[3].contains("residual");
            DeviceBuffer am = a.slice(0, (long) rows * k * 2, "A");
            DeviceBuffer cm = c.slice(0, (long) rows * n * 2, "C");
            double flop = 2.0 * rows * n * k;
            boolean allTiles = rows == m && !s[0].contains(" ");
            GemmTile def = gemm.defaultTile(rows, n, k, gelu);
            for (GemmTile tile : GemmTile.values()) {
                if (!gemm.supports(tile) || !(allTiles || tile.hopper() || tile == GemmTile.T128x128x64)) {
                    continue;
                }
                String variant = s[0] + " " + s[3] + " " + tile + (tile == def ? " (default)" : "");
                if (!wanted("gemm", variant)) {
                    continue;
                }
                float ms = time(() -> gemm.run(stream, am, w, bias, residual ? cm : null, cm, rows, n, k, gelu, tile));
                report("gemm", variant, String.format(Locale.ROOT, "M=%d N=%d K=%d", rows, n, k), ms, flop / ms / 1e9,
                        "TFLOP/s");
            }
            pool.release(mark);
        }
        // The pure bf16 matrix rate (no epilogue) at a large square shape, for the ceiling.
        if (!wanted("gemm", "square")) {
            return;
        }
        long mark = pool.mark();
        int sq = 8192;
        DeviceBuffer w = random((long) sq * sq, 1.0 / Math.sqrt(sq), "W8k");
        for (GemmTile tile : GemmTile.values()) {
            if (!gemm.supports(tile)) {
                continue;
            }
            DeviceBuffer a8 = a.slice(0, (long) sq * sq * 2, "A8k"), c8 = c.slice(0, (long) sq * sq * 2, "C8k");
            float ms = time(() -> gemm.run(stream, a8, w, null, null, c8, sq, sq, sq, false, tile));
            report("gemm", "square " + tile, "M=N=K=8192", ms, 2.0 * sq * sq * sq / ms / 1e9, "TFLOP/s");
        }
        pool.release(mark);
    }

    /**
     * The 2:4-sparse GEMMs (gemm_sparse.cuh, and on sm_90 gemm_sparse_sm90.cuh / gemm_sparse_sm90_tma.cuh) at the vit_b
     * shapes of batch 32 and batch 1 and their epilogues, every sparse tile; TFLOP/s
     * counted as for the dense product (2 M N K), so the rates compare directly with the dense rows.
     */
    private void sparseGemms() {
        int batch32 = 32 * TOKENS;
        // name, n, k, epilogue, rows (M): vit_b at batch 32 and at batch 1
        String[][] shapes = {{"qkv", "2304", "768", "bias", "" + batch32},
            {"proj", "768", "768", "bias+residual", "" + batch32}, {"mlp.lin1", "3072", "768", "bias+gelu", "" + batch32},
            {"mlp.lin2", "768", "3072", "bias+residual", "" + batch32}, {"b1 qkv", "2304", "768", "bias", "" + TOKENS},
            {"b1 proj", "768", "768", "bias+residual", "" + TOKENS}, {"b1 mlp.lin1", "3072", "768", "bias+gelu", "" + TOKENS},
            {"b1 mlp.lin2", "768", "3072", "bias+residual", "" + TOKENS}};
        if (!wanted("gemm", "sparse2:4")) {
            return;
        }
        long outer = pool.mark();
        DeviceBuffer a = random(batch32 * 3072L, 1.0, "A");
        DeviceBuffer c = random(batch32 * 3072L, 1.0, "C");
        try (PinnedBuffer staging = new PinnedBuffer(ctx, 64L << 20, "sparse weight staging")) {
            Random rnd = new Random(7);
            for (String[] sh : shapes) {
                int n = Integer.parseInt(sh[1]), k = Integer.parseInt(sh[2]), m = Integer.parseInt(sh[4]);
                long mark = pool.mark();
                float[] dense = new float[n * k];
                for (int i = 0; i < dense.length; i++) {
                    dense[i] = (float) (rnd.nextGaussian() / Math.sqrt(k));
                }
                TwoFourWeights tw = TwoFourWeights.compress(TwoFourPruning.prune(dense, n, k, sh[0]), n, k, sh[0]);
                SparseWeight w = SparseWeightUpload.upload(tw, pool, stream, staging, sh[0]);
                DeviceBuffer bias = random(n, 0.5, "bias");
                boolean gelu = sh[3].contains("gelu"), residual = sh[3].contains("residual");
                DeviceBuffer cm = c.slice(0, (long) m * n * 2, "C");
                double flop = 2.0 * m * n * k;
                for (SparseTile tile : SparseTile.values()) {
                    if (!sparseGemm.supports(tile)) {
                        continue;
                    }
                    String variant = sh[0] + " " + sh[3] + " sparse2:4 " + tile
                            + (tile == sparseGemm.defaultTile(m, n, k, gelu) ? " (default)" : "");
                    if (!wanted("gemm", variant)) {
                        continue;
                    }
                    float ms = time(() -> sparseGemm.run(stream, a, w, bias, residual ? cm : null, cm, m, gelu, tile));
                    report("gemm", variant, String.format(Locale.ROOT, "M=%d N=%d K=%d", m, n, k), ms, flop / ms / 1e9,
                            "TFLOP/s");
                }
                pool.release(mark);
            }
        }
        pool.release(outer);
    }

    /**
     * The FP8 (e4m3) GEMMs (gemm_sm90_tma.cuh with E4M3; compute capability 9.0) at the vit_b shapes of batch 32 and
     * batch 1, every tile, TFLOP/s as 2 M N K (compare with the bf16 rows); the e4m3 matrix rate at 8192^3; and the
     * kernels that make their inputs: the row quantization of the proj / lin2 inputs and the fused LayerNorm (GB/s
     * counted as bf16 read + e4m3 written). Filter: "e4m3".
     */
    private void fp8Gemms() {
        if (!wanted("gemm", "e4m3") && !wanted("quantize", "e4m3") && !wanted("gemm", "mlp pair")) {
            return;
        }
        String why = fp8Gemm.gemmUnavailable();
        if (why != null) {
            System.out.println("fp8 GEMM rows skipped: " + why);
            return;
        }
        int batch32 = 32 * TOKENS;
        long outer = pool.mark();
        DeviceBuffer a = random(batch32 * 3072L, 1.0, "A");
        DeviceBuffer c = random(batch32 * 3072L, 1.0, "C");
        DeviceBuffer q = pool.allocate(batch32 * 3072L, "qa"), qs = pool.allocate(batch32 * 4L, "qa scales");
        DeviceBuffer gamma = random(768, 1.0, "gamma"), beta = random(768, 0.5, "beta");
        for (int k : new int[] {768, 3072}) {
            String variant = (k == 768 ? "proj input" : "mlp.lin2 input") + " e4m3";
            if (wanted("quantize", variant)) {
                float ms = time(() -> fp8Gemm.quantize(stream, a, q, qs, batch32, k));
                report("quantize", variant, String.format(Locale.ROOT, "M=%d C=%d", batch32, k), ms,
                        3.0 * batch32 * k / ms / 1e6, "GB/s");
            }
        }
        if (wanted("quantize", "layernorm e4m3")) {
            float ms = time(() -> fp8Gemm.layerNormQuantize(stream, a, gamma, beta, q, qs, batch32, 768, 1e-6f));
            report("quantize", "layernorm e4m3", String.format(Locale.ROOT, "M=%d C=%d", batch32, 768), ms,
                    3.0 * batch32 * 768 / ms / 1e6, "GB/s");
        }
        String[][] shapes = {{"qkv", "2304", "768", "bias", "" + batch32},
            {"proj", "768", "768", "bias+residual", "" + batch32}, {"mlp.lin1", "3072", "768", "bias+gelu", "" + batch32},
            {"mlp.lin2", "768", "3072", "bias+residual", "" + batch32}, {"b1 qkv", "2304", "768", "bias", "" + TOKENS},
            {"b1 proj", "768", "768", "bias+residual", "" + TOKENS}, {"b1 mlp.lin1", "3072", "768", "bias+gelu", "" + TOKENS},
            {"b1 mlp.lin2", "768", "3072", "bias+residual", "" + TOKENS}};
        try (PinnedBuffer staging = new PinnedBuffer(ctx, 64L << 20, "fp8 weight staging")) {
            Random rnd = new Random(11);
            for (String[] sh : shapes) {
                int n = Integer.parseInt(sh[1]), k = Integer.parseInt(sh[2]), m = Integer.parseInt(sh[4]);
                long mark = pool.mark();
                fp8Gemm.quantize(stream, a, q, qs, m, k);   // realistic e4m3 operands and scales
                Fp8Weight w = Fp8WeightUpload.upload(gaussian(rnd, n * k, 1 / Math.sqrt(k)), n, k, pool, stream, staging,
                        sh[0]);
                DeviceBuffer bias = random(n, 0.5, "bias");
                boolean gelu = sh[3].contains("gelu"), residual = sh[3].contains("residual");
                DeviceBuffer cm = c.slice(0, (long) m * n * 2, "C");
                double flop = 2.0 * m * n * k;
                for (Fp8Tile tile : Fp8Tile.values()) {
                    String variant = sh[0] + " " + sh[3] + " e4m3 " + tile
                            + (tile == fp8Gemm.defaultTile(m, n, k, gelu) ? " (default)" : "");
                    if (!wanted("gemm", variant)) {
                        continue;
                    }
                    float ms = time(() -> fp8Gemm.run(stream, q, qs, w, bias, residual ? cm : null, cm, m, gelu, tile));
                    report("gemm", variant, String.format(Locale.ROOT, "M=%d N=%d K=%d", m, n, k), ms, flop / ms / 1e9,
                            "TFLOP/s");
                }
                pool.release(mark);
            }
            for (int m : new int[] {batch32, TOKENS}) {
                mlpPair(m, a, c, staging, rnd);
            }
            if (wanted("gemm", "square e4m3")) {
                long mark = pool.mark();
                int sq = 8192;
                // e4m3 operands from the quantize kernel, as rows of 1024 (it takes rows up to 5120 wide); the
                // first 8192 of those rows' scales serve as the 8192 rows' (the values do not change the time)
                DeviceBuffer a8 = pool.allocate((long) sq * sq, "A8k"), s8 = pool.allocate(sq * 8 * 4L, "A8k scales");
                fp8Gemm.quantize(stream, c, a8, s8, sq * 8, sq / 8);
                Fp8Weight w = Fp8WeightUpload.upload(gaussian(rnd, sq * sq, 1 / Math.sqrt(sq)), sq, sq, pool, stream,
                        staging, "W8k");
                DeviceBuffer c8 = a.slice(0, (long) sq * sq * 2, "C8k");
                for (Fp8Tile tile : Fp8Tile.values()) {
                    float ms = time(() -> fp8Gemm.run(stream, a8, s8, w, null, null, c8, sq, false, tile));
                    report("gemm", "square e4m3 " + tile, "M=N=K=8192", ms, 2.0 * sq * sq * sq / ms / 1e9, "TFLOP/s");
                }
                pool.release(mark);
            }
        }
        pool.release(outer);
    }

    /**
     * mlp.lin1 -> lin2 in FP8 as the encoder runs them (filter "mlp pair"): lin1 writes e4m3 + one scale per 128
     * columns, lin2 promotes per 128 of k, on HTS128x128 (default) and HTP128x128; each piece and the sum. (The per-row
     * pair it replaced, lin1 bf16 -> quantize -> lin2: bench/results/2026-12-05-h100-fp8-blockscale.md.)
     */
    private void mlpPair(int m, DeviceBuffer a, DeviceBuffer c, PinnedBuffer staging, Random rnd) {
        if (!wanted("gemm", "mlp pair")) {
            return;
        }
        long mark = pool.mark();
        int d = 768, mlp = 3072;
        DeviceBuffer q1 = pool.allocate((long) m * d, "lin1 qa"), s1 = pool.allocate(m * 4L, "lin1 qa scales");
        fp8Gemm.quantize(stream, a, q1, s1, m, d);
        Fp8Weight w1 = Fp8WeightUpload.upload(gaussian(rnd, mlp * d, 1 / Math.sqrt(d)), mlp, d, pool, stream, staging,
                "lin1");
        Fp8Weight w2 = Fp8WeightUpload.upload(gaussian(rnd, d * mlp, 1 / Math.sqrt(mlp)), d, mlp, pool, stream, staging,
                "lin2");
        DeviceBuffer b1 = random(mlp, 0.5, "lin1 bias"), b2 = random(d, 0.5, "lin2 bias");
        DeviceBuffer q2 = pool.allocate((long) m * mlp, "lin2 qa");
        DeviceBuffer bs = pool.allocate((long) m * (mlp / Fp8GemmKernels.SCALE_BLOCK) * 4, "lin2 block scales");
        DeviceBuffer x = c.slice(0, (long) m * d * 2, "x");
        String shape = String.format(Locale.ROOT, "M=%d N=%d/%d K=%d/%d", m, mlp, d, d, mlp);
        double flop = 2.0 * 2 * m * mlp * d;
        Fp8Tile t1 = fp8Gemm.defaultTile(m, mlp, d, true);
        String tag = m == TOKENS ? "b1 " : "";
        float n1 = time(() -> fp8Gemm.runE4m3Out(stream, q1, s1, w1, b1, q2, bs, m, true, t1));
        report("gemm", tag + "mlp pair blockscale lin1 e4m3 out " + t1, shape, n1, 2.0 * m * mlp * d / n1 / 1e9,
                "TFLOP/s");
        Fp8Tile t = Fp8GemmKernels.blockScaledTile();
        float n2 = time(() -> fp8Gemm.runBlockScaled(stream, q2, bs, w2, b2, x, x, m, false, t));
        report("gemm", tag + "mlp pair blockscale lin2 " + t, shape, n2, 2.0 * m * mlp * d / n2 / 1e9, "TFLOP/s");
        report("gemm", tag + "mlp pair blockscale total " + t, shape, n1 + n2, flop / (n1 + n2) / 1e9, "TFLOP/s");
        pool.release(mark);
    }

    private static float[] gaussian(Random rnd, int count, double std) {
        float[] v = new float[count];
        for (int i = 0; i < count; i++) {
            v[i] = (float) (rnd.nextGaussian() * std);
        }
        return v;
    }

    // ---- attention ----------------------------------------------------------------------------------

    private void attention() {
        int batch = 8;
        for (int[] cfg : new int[][] {{12, 64}, {16, 80}}) {   // vit_b / vit_l head dim, vit_h
            int heads = cfg[0], hd = cfg[1];
            String model = hd == 64 ? "vit_b" : "vit_h";
            long mark = pool.mark();
            int cTotal = heads * hd;
            DeviceBuffer qkv = random((long) batch * TOKENS * 3 * cTotal, 1.0, "qkv");
            DeviceBuffer bias = random(3L * cTotal, 0.5, "qkv bias");
            DeviceBuffer out = pool.allocateBf16((long) batch * TOKENS * cTotal, "out");
            for (int window : new int[] {14, 0}) {
                // Both kernels where the Hopper one applies (head dim 64): mma.sync, then wgmma.
                boolean[] kernelsToRun = hd == 64 && gemm.supports(GemmTile.H128x256)
                        ? new boolean[] {false, true} : new boolean[] {false};
                for (boolean wgmma : kernelsToRun) {
                    String variant = model + (window > 0 ? " windowed 14x14" : " global") + (wgmma ? " wgmma" : "");
                    if (!wanted("attention", variant)) {
                        continue;
                    }
                    int s = window > 0 ? window : 64;
                    DeviceBuffer relH = random((2L * s - 1) * hd, 0.2, "rel_h");
                    DeviceBuffer relW = random((2L * s - 1) * hd, 0.2, "rel_w");
                    float ms = time(() -> attention.run(stream, qkv, window > 0 ? bias : null, relH, relW, out,
                            batch, 64, 64, heads, hd, window, wgmma));
                    // Useful FLOPs: q.k^T and p.v over the real sequences (windows: 25 of 196 tokens, padding
                    // included).
                    double seqs = window > 0 ? batch * 25.0 : batch;
                    double len = window > 0 ? 196 : 4096;
                    double flop = seqs * heads * 4.0 * len * len * hd;
                    report("attention", variant, String.format(Locale.ROOT, "B=%d heads=%d hd=%d", batch, heads, hd),
                            ms, flop / ms / 1e9, "TFLOP/s");
                }
            }
            pool.release(mark);
        }
    }

    // ---- LayerNorm ----------------------------------------------------------------------------------

    private void layerNorm() {
        if (!wanted("layernorm", "plain")) {
            return;
        }
        int rows = 32 * TOKENS, c = 768;
        long mark = pool.mark();
        DeviceBuffer x = random((long) rows * c, 1.0, "x"), r = random((long) rows * c, 1.0, "r");
        DeviceBuffer g = random(c, 1.0, "gamma"), b = random(c, 1.0, "beta");
        DeviceBuffer y = pool.allocateBf16((long) rows * c, "y"), sum = pool.allocateBf16((long) rows * c, "sum");
        float ms = time(() -> norm.layerNorm(stream, x, g, b, y, rows, c, 1e-6f));
        report("layernorm", "plain", "rows=" + rows + " C=768", ms, 2.0 * rows * c * 2 / ms / 1e6, "GB/s");
        ms = time(() -> norm.layerNorm(stream, x, r, sum, g, b, y, rows, c, 1e-6f));
        report("layernorm", "+residual, writes sum", "rows=" + rows + " C=768", ms, 4.0 * rows * c * 2 / ms / 1e6, "GB/s");
        pool.release(mark);
    }

    // ---- helpers ------------------------------------------------------------------------------------

    /** Median milliseconds of {@code repeats} launches, each between two events, after 3 warm-ups. */
    private float time(Runnable launch) {
        try (CudaEvent start = new CudaEvent(ctx, true); CudaEvent end = new CudaEvent(ctx, true)) {
            for (int i = 0; i < 3; i++) {
                launch.run();
            }
            stream.synchronize();
            float[] ms = new float[repeats];
            for (int i = 0; i < repeats; i++) {
                stream.record(start);
                launch.run();
                stream.record(end);
                end.synchronize();
                ms[i] = CudaEvent.elapsedMillis(start, end);
            }
            Arrays.sort(ms);
            return ms[repeats / 2];
        }
    }

    private void report(String op, String variant, String shape, float ms, double rate, String unit) {
        String line = String.format(Locale.ROOT, "%s\t%s\t%s\t%.4f\t%.1f\t%s", op, variant, shape, ms, rate, unit);
        System.out.printf(Locale.ROOT, "%-10s %-42s %-26s %9.3f ms %8.1f %s%n", op, variant, shape, ms, rate, unit);
        rows.add(line);
    }

    private PinnedBuffer randomBlock;

    /** A buffer of {@code count} bf16 ~ N(0, std^2): a 32 Mi-value random block, uploaded and tiled. */
    private DeviceBuffer random(long count, double std, String label) {
        int block = 32 << 20;
        if (randomBlock == null) {
            randomBlock = new PinnedBuffer(ctx, 2L * block, "random block");
            ByteBuffer bb = randomBlock.buffer();
            Random rnd = new Random(42);
            for (int i = 0; i < block; i++) {
                bb.putShort(Bf16.fromFloat((float) rnd.nextGaussian()));
            }
        }
        // N(0,1) scaled by a power of two keeps bf16 exact; nearest power of two is close enough here.
        DeviceBuffer buf = pool.allocateBf16(count, label);
        for (long at = 0; at < count; at += block) {
            long n = Math.min(block, count - at);
            stream.upload(randomBlock, 0, buf, at * 2, n * 2);
        }
        stream.synchronize();
        if (std != 1.0) {
            scale(buf, count, std);
        }
        return buf;
    }

    /** Scales by the power of two nearest to {@code std} (a GEMM with a diagonal would be overkill). */
    private void scale(DeviceBuffer buf, long count, double std) {
        // Simple and exact: rewrite through the host once (buffers that need scaling are small weights).
        int n = Math.toIntExact(count);
        try (PinnedBuffer tmp = new PinnedBuffer(ctx, 2L * n, "scale")) {
            stream.download(buf, 0, tmp, 0, 2L * n);
            stream.synchronize();
            float f = (float) Math.scalb(1.0, Math.getExponent(std * Math.sqrt(2)));
            ByteBuffer bb = tmp.buffer();
            for (int i = 0; i < n; i++) {
                bb.putShort(i * 2, Bf16.fromFloat(Bf16.toFloat(bb.getShort(i * 2)) * f));
            }
            stream.upload(tmp, 0, buf, 0, 2L * n);
            stream.synchronize();
        }
    }
}
