package io.samstream.gpu.cuda.kernels;

import static io.samstream.gpu.cuda.LaunchChecks.ptr;
import static io.samstream.gpu.cuda.LaunchChecks.require;
import static io.samstream.gpu.cuda.LaunchChecks.requireBf16;
import static io.samstream.gpu.cuda.LaunchChecks.requireBytes;

import java.util.Locale;

import jcuda.Pointer;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.TensorMaps;

/**
 * The FP8 (e4m3) GEMM launchers: {@code c[m,n] = (qa[m,k] · qw[n,k]ᵀ) · aScale[m] · wScale[n] (+ bias[n]) (→ GELU)
 * (+ residual[m,n])}, e4m3 operands with per-row activation scales and per-output-channel weight scales, fp32
 * accumulation, bf16 out (gemm_sm90_tma.cuh with E4M3: wgmma m64nNk32 e4m3 on the bf16 TMA kernel's pipeline), and the
 * kernels that make the activation operand from bf16 rows (fp8_quant.cuh): as they are ({@link #quantize}) or after a
 * LayerNorm ({@link #layerNormQuantize}). The GEMM runs on compute capability 9.0 with tensor maps only
 * ({@link #gemmRuns}); the quantize kernels everywhere. Arithmetic and layouts: {@link io.samstream.gpu.fp8.Fp8Rows}.
 */
public final class Fp8GemmKernels {
    /**
     * The FP8 GEMM tiles: those of the bf16 TMA kernel ({@link GemmKernels.GemmTile}'s {@code HTS...} / {@code HTP...}),
     * the same stages and shared memory (a stage of 128 e4m3 of k is the bytes of 64 bf16).
     */
    public enum Fp8Tile {
        HTS128x256("tmas", 256, 4),
        HTS128x128("tmas", 128, 6),
        /** Ping-pong consumers: each consumer warpgroup computes whole 128 x 128 tiles, in turn with the other. */
        HTP128x128("tmap", 128, 6);

        final String symbol;
        /**
         * The block-scaled variants (gemm_fp8_sm90_blockscale.cuh): e4m3 out (lin1) on every tile, block-scaled A in
         * (lin2) on {@link #blockScaledTile()}'s alone.
         */
        final String e4m3OutSymbol, blockInSymbol;
        final int bm = 128, bn, smem;
        static final int THREADS = 384;

        /** gemm_sm90_tma::Config<BN, STAGES, true, PINGPONG>::SMEM_BYTES, as for the bf16 tiles. */
        Fp8Tile(String pipeline, int bn, int stages) {
            this.symbol = "samstream_gemm_e4m3_sm90" + pipeline + "_128x" + bn;
            this.e4m3OutSymbol = "samstream_gemm_e4m3o_sm90" + pipeline + "_128x" + bn;
            this.blockInSymbol = bn == 128 && pipeline.equals("tmas") ? "samstream_gemm_e4m3b_sm90tmas_128x128" : null;
            this.bn = bn;
            this.smem = stages * (bm + bn) * 64 * 2 + 1024 + 2 * 2 * 64 * 64 * 2 + 1024;
        }
    }

    /**
     * An FP8 Linear weight {@code [n, k]} on the device: {@code values} e4m3 bytes row-major, {@code scales} fp32
     * {@code [n]} (one per output channel); see {@link Fp8WeightUpload}.
     */
    public record Fp8Weight(DeviceBuffer values, DeviceBuffer scales, int n, int k) {}

    private static final String QUANTIZE = "samstream_quantize_e4m3_v", LAYERNORM = "samstream_layernorm_e4m3_v";
    /** The quantize kernels' row widths: VEC chunks of 8 per lane, rows of up to 256 VEC columns. */
    private static final int[] QUANTIZE_VECS = {1, 2, 3, 4, 5, 8, 12, 16, 20};
    private static final int LAYERNORM_VECS = 5;
    private static final int ROWS_PER_CTA = 8;
    /** Columns of an e4m3 output (= k of its consumer) per block scale: gemm_sm90::SCALE_BLOCK. */
    public static final int SCALE_BLOCK = 128;

    private final CudaKernels kernels;

    /** The Fp8GemmKernels of {@code kernels} (made at the first call, which looks its kernels up). */
    public static Fp8GemmKernels of(CudaKernels kernels) {
        return kernels.family(Fp8GemmKernels.class, Fp8GemmKernels::new);
    }

    private Fp8GemmKernels(CudaKernels kernels) {
        this.kernels = kernels;
        for (Fp8Tile t : Fp8Tile.values()) {
            kernels.add(t.symbol, t.smem);
            kernels.add(t.e4m3OutSymbol, t.smem);
            if (t.blockInSymbol != null) {
                kernels.add(t.blockInSymbol, t.smem);
            }
        }
        for (int vec : QUANTIZE_VECS) {
            kernels.add(QUANTIZE + vec, 0);
        }
        for (int vec = 1; vec <= LAYERNORM_VECS; vec++) {
            kernels.add(LAYERNORM + vec, 0);
        }
    }

    /**
     * True when the FP8 GEMM can run here: compute capability 9.0 with the driver's tensor-map encoder (there is no
     * cp.async fallback of it). Null when it can, else why not, naming the GPU.
     */
    public String gemmUnavailable() {
        if (!kernels.hopper()) {
            return "the FP8 GEMM needs compute capability 9.0 (H100, H200); this GPU is "
                    + kernels.context().info().describe();
        }
        if (!kernels.tmaAvailable()) {
            return "the FP8 GEMM needs the driver's tensor-map encoder (cuTensorMapEncodeTiled), which could not be bound";
        }
        return null;
    }

    /** {@link #gemmUnavailable()} is null. */
    public boolean gemmRuns() {
        return gemmUnavailable() == null;
    }

    /** {@code q, scales = quantize(x)} per row: bf16 {@code x [rows, c]} to e4m3 {@code q [rows, c]} + fp32 {@code scales [rows]}. */
    public void quantize(CudaStream stream, DeviceBuffer x, DeviceBuffer q, DeviceBuffer scales, int rows, int c) {
        String op = String.format(Locale.ROOT, "quantizeE4m3 rows=%d c=%d", rows, c);
        String kernel = quantizeKernel(c);
        require(kernel != null, op + ": c must be a positive multiple of 8, at most "
                + 256 * QUANTIZE_VECS[QUANTIZE_VECS.length - 1]);
        requireRows(op, rows, c, q, scales);
        requireBf16(x, (long) rows * c, op, "x");
        Pointer params = Pointer.to(ptr(x), ptr(q), ptr(scales), Pointer.to(new int[] {rows}), Pointer.to(new int[] {c}));
        kernels.launch(kernel, grid(rows), 1, 1, 32 * ROWS_PER_CTA, 0, stream, params, op);
    }

    /** {@code q, scales = quantize(LayerNorm(x) · gamma + beta)} per row (the bf16 LayerNorm's statistics, fp32). */
    public void layerNormQuantize(CudaStream stream, DeviceBuffer x, DeviceBuffer gamma, DeviceBuffer beta,
                                  DeviceBuffer q, DeviceBuffer scales, int rows, int c, float eps) {
        String op = String.format(Locale.ROOT, "layerNormE4m3 rows=%d c=%d", rows, c);
        String kernel = layerNormKernel(c);
        require(kernel != null, op + ": c must be a positive multiple of 8, at most "
                + 256 * LAYERNORM_VECS);
        require(eps > 0 && Float.isFinite(eps), op + ": eps must be positive");
        requireRows(op, rows, c, q, scales);
        requireBf16(x, (long) rows * c, op, "x");
        requireBf16(gamma, c, op, "gamma");
        requireBf16(beta, c, op, "beta");
        Pointer params = Pointer.to(ptr(x), ptr(gamma), ptr(beta), ptr(q), ptr(scales), Pointer.to(new int[] {rows}),
                Pointer.to(new int[] {c}), Pointer.to(new float[] {eps}));
        kernels.launch(kernel, grid(rows), 1, 1, 32 * ROWS_PER_CTA, 0, stream, params, op);
    }

    /**
     * {@code c[m,n] = (qa · w.valuesᵀ) · aScales[m] · w.scales[n] (+ bias[n]) (→ GELU) (+ residual[m,n])}, the tile
     * chosen for the shape ({@link #defaultTile}).
     *
     * @param qa       e4m3 {@code [m, k]} ({@link #quantize}, {@link #layerNormQuantize})
     * @param aScales  fp32 {@code [m]}
     * @param bias     may be null
     * @param residual may be null; may be the same buffer as {@code c}
     */
    public void run(CudaStream stream, DeviceBuffer qa, DeviceBuffer aScales, Fp8Weight w, DeviceBuffer bias,
                    DeviceBuffer residual, DeviceBuffer c, int m, boolean gelu) {
        run(stream, qa, aScales, w, bias, residual, c, m, gelu, defaultTile(m, w.n(), w.k(), gelu));
    }

    /** As the method above, on the tile named (tests and benchmarks). */
    public void run(CudaStream stream, DeviceBuffer qa, DeviceBuffer aScales, Fp8Weight w, DeviceBuffer bias,
                    DeviceBuffer residual, DeviceBuffer c, int m, boolean gelu, Fp8Tile tile) {
        int n = w.n(), k = w.k();
        String op = String.format(Locale.ROOT, "gemmE4m3 m=%d n=%d k=%d", m, n, k);
        requireGemm(op, m, n, k, qa, aScales, w);
        launchBf16Out(stream, tile.symbol, tile, qa, aScales, w, bias, residual, c, m, gelu, op);
    }

    /**
     * mlp.lin1 writing e4m3 straight from its epilogue: {@code v = (qa · w.valuesᵀ) · aScales[m] · w.scales[n] + bias[n]
     * (→ GELU)}, then per row and block of {@value #SCALE_BLOCK} columns {@code qScales[m, b] = max|v| / 448} and
     * {@code q = e4m3(v / qScales)}: the input of {@link #runBlockScaled}, with no quantize pass between.
     *
     * @param q       e4m3 {@code [m, n]}, out
     * @param qScales fp32 {@code [m, n / 128]}, out
     */
    public void runE4m3Out(CudaStream stream, DeviceBuffer qa, DeviceBuffer aScales, Fp8Weight w, DeviceBuffer bias,
                           DeviceBuffer q, DeviceBuffer qScales, int m, boolean gelu, Fp8Tile tile) {
        int n = w.n(), k = w.k();
        String op = String.format(Locale.ROOT, "gemmE4m3Out m=%d n=%d k=%d", m, n, k);
        requireGemm(op, m, n, k, qa, aScales, w);
        require(n % SCALE_BLOCK == 0, op + ": n must be a multiple of " + SCALE_BLOCK + " (one scale per block)");
        requireBytes(q, (long) m * n, op, "q");
        requireBytes(qScales, (long) m * (n / SCALE_BLOCK) * 4, op, "qScales");
        if (bias != null) {
            requireBf16(bias, n, op, "bias");
        }
        require(CudaKernels.tmaCanMap(qa, w.values(), q), op + ": a tensor map cannot describe qa, w or q (" + qa
                + ", " + w.values() + ", " + q + "): they must be pool buffers at 16-byte aligned addresses");
        TensorMaps maps = kernels.tensorMaps();
        Pointer params = Pointer.to(Pointer.to(maps.u8RowMajor(qa, m, k, tile.bm, op + " qa")),
                Pointer.to(maps.u8RowMajor(w.values(), n, k, tile.bn, op + " w")),
                Pointer.to(maps.u8RowMajor(q, m, n, 64, op + " q")), ptr(aScales), ptr(w.scales()), ptr(bias),
                ptr(qScales), Pointer.to(new int[] {m}), Pointer.to(new int[] {n}), Pointer.to(new int[] {k}),
                Pointer.to(new int[] {GemmKernels.epilogue(bias, gelu, null)}));
        kernels.launch(tile.e4m3OutSymbol, grid(tile, m, n), 1, 1, Fp8Tile.THREADS, tile.smem, stream, params, op);
    }

    /**
     * mlp.lin2 on {@link #runE4m3Out}'s output: {@code c[m,n] = Σ_b (qa[m, b] · w.values[n, b]ᵀ) · aBlockScales[m, b]
     * · w.scales[n] (+ bias[n]) (→ GELU) (+ residual[m,n])} over the {@value #SCALE_BLOCK}-wide k blocks b, each
     * block's partial sum promoted into fp32 registers in the mainloop, on {@link #blockScaledTile()}.
     *
     * @param aBlockScales fp32 {@code [m, k / 128]}
     */
    public void runBlockScaled(CudaStream stream, DeviceBuffer qa, DeviceBuffer aBlockScales, Fp8Weight w,
                               DeviceBuffer bias, DeviceBuffer residual, DeviceBuffer c, int m, boolean gelu) {
        runBlockScaled(stream, qa, aBlockScales, w, bias, residual, c, m, gelu, blockScaledTile());
    }

    /** As the method above, on the tile named (a 128-wide one: tests and benchmarks). */
    public void runBlockScaled(CudaStream stream, DeviceBuffer qa, DeviceBuffer aBlockScales, Fp8Weight w,
                               DeviceBuffer bias, DeviceBuffer residual, DeviceBuffer c, int m, boolean gelu,
                               Fp8Tile tile) {
        int n = w.n(), k = w.k();
        String op = String.format(Locale.ROOT, "gemmE4m3BlockScaled m=%d n=%d k=%d", m, n, k);
        require(tile.blockInSymbol != null, op + ": the block-scaled GEMM runs on " + blockScaledTile() + " only, not "
                + tile);
        requireGemm(op, m, n, k, qa, aBlockScales, w);
        require(k % SCALE_BLOCK == 0, op + ": k must be a multiple of " + SCALE_BLOCK + " (one scale per block)");
        requireBytes(aBlockScales, (long) m * (k / SCALE_BLOCK) * 4, op, "aBlockScales");
        launchBf16Out(stream, tile.blockInSymbol, tile, qa, aBlockScales, w, bias, residual, c, m, gelu, op);
    }

    /**
     * The launch shared by {@link #run} and {@link #runBlockScaled}: both read e4m3 {@code qa} and {@code w} through
     * tensor maps, take one fp32 scale buffer for {@code qa} (per row or per row and k block, as {@code symbol}
     * reads it) and write bf16 {@code c} through the same epilogue.
     */
    private void launchBf16Out(CudaStream stream, String symbol, Fp8Tile tile, DeviceBuffer qa, DeviceBuffer aScales,
                               Fp8Weight w, DeviceBuffer bias, DeviceBuffer residual, DeviceBuffer c, int m,
                               boolean gelu, String op) {
        int n = w.n(), k = w.k();
        requireBf16(c, (long) m * n, op, "c");
        if (bias != null) {
            requireBf16(bias, n, op, "bias");
        }
        if (residual != null) {
            requireBf16(residual, (long) m * n, op, "residual");
        }
        require(CudaKernels.tmaCanMap(qa, w.values(), c), op + ": a tensor map cannot describe qa, w or c (" + qa + ", "
                + w.values() + ", " + c + "): they must be pool buffers at 16-byte aligned addresses");
        TensorMaps maps = kernels.tensorMaps();
        Pointer params = Pointer.to(Pointer.to(maps.u8RowMajor(qa, m, k, tile.bm, op + " qa")),
                Pointer.to(maps.u8RowMajor(w.values(), n, k, tile.bn, op + " w")),
                Pointer.to(maps.bf16RowMajor(c, m, n, 64, op + " c")), ptr(aScales), ptr(w.scales()), ptr(bias),
                ptr(residual), Pointer.to(new int[] {m}), Pointer.to(new int[] {n}), Pointer.to(new int[] {k}),
                Pointer.to(new int[] {GemmKernels.epilogue(bias, gelu, residual)}));
        kernels.launch(symbol, grid(tile, m, n), 1, 1, Fp8Tile.THREADS, tile.smem, stream, params, op);
    }

    /**
     * The block-scaled GEMM's tile, its only one: cooperative 128 x 128. Its 64-row temporary fragment fits beside the
     * accumulators without spills (ptxas: 167 registers), and the two consumer warpgroups' MMAs overlap each other's
     * promotion. The ping-pong variant lost its benchmark and is gone (bench/results/2026-12-05-h100-fp8-blockscale.md).
     */
    public static Fp8Tile blockScaledTile() {
        return Fp8Tile.HTS128x128;
    }

    private void requireGemm(String op, int m, int n, int k, DeviceBuffer qa, DeviceBuffer aScales, Fp8Weight w) {
        require(m > 0 && n > 0 && k > 0, op + ": dimensions must be positive");
        String why = gemmUnavailable();
        require(why == null, op + ": " + why);
        require(k % 16 == 0, op + ": k must be a multiple of 16 (16-byte e4m3 rows)");
        require(n % 8 == 0, op + ": n must be a multiple of 8");
        requireBytes(qa, (long) m * k, op, "qa");
        requireBytes(aScales, (long) m * 4, op, "aScales");
        requireBytes(w.values(), (long) n * k, op, "w.values");
        requireBytes(w.scales(), (long) n * 4, op, "w.scales");
    }

    private int grid(Fp8Tile tile, int m, int n) {
        long tiles = (long) ((m + tile.bm - 1) / tile.bm) * ((n + tile.bn - 1) / tile.bn);
        return (int) Math.min(tiles, kernels.context().info().multiprocessors());   // persistent CTAs
    }

    /**
     * The tile for a product of depth {@code k} with or without GELU: {@link TileChoice} asked about a bf16 product
     * of depth k / 2, whose mainloop has as many k tiles (128 e4m3 of k per tile, 64 bf16) and, at twice the bf16
     * rate, about the same time, so the epilogue weighs as much against it.
     */
    public Fp8Tile defaultTile(int m, int n, int k, boolean gelu) {
        if (k >= 2048 && !gelu) {
            // deep products (mlp.lin2, K 3072): ping-pong 128 x 128 measured fastest (0.684 against 0.763 ms for the
            // tile TileChoice gives, bench/results/2026-12-04-h200-fp8.md)
            return Fp8Tile.HTP128x128;
        }
        TileChoice.Choice choice = TileChoice.choose(m, n, k / 2, gelu, kernels.context().info().multiprocessors());
        return choice.pingPong() ? Fp8Tile.HTP128x128 : choice.narrow() ? Fp8Tile.HTS128x128 : Fp8Tile.HTS128x256;
    }

    private static void requireRows(String op, int rows, int c, DeviceBuffer q, DeviceBuffer scales) {
        require(rows > 0 && c > 0, op + ": dimensions must be positive");
        requireBytes(q, (long) rows * c, op, "q");
        requireBytes(scales, (long) rows * 4, op, "scales");
    }

    private static int grid(int rows) {
        return (rows + ROWS_PER_CTA - 1) / ROWS_PER_CTA;
    }

    /** The quantize kernel for rows of {@code c} columns: the smallest VEC that holds them; null when none does. */
    static String quantizeKernel(int c) {
        if (c > 0 && c % 8 == 0) {
            for (int vec : QUANTIZE_VECS) {
                if (256 * vec >= c) {
                    return QUANTIZE + vec;
                }
            }
        }
        return null;
    }

    /** The LayerNorm + quantize kernel for rows of {@code c} columns (at most 1280); null when none holds them. */
    static String layerNormKernel(int c) {
        int vec = (c + 255) / 256;
        return c > 0 && c % 8 == 0 && vec <= LAYERNORM_VECS ? LAYERNORM + vec : null;
    }
}
