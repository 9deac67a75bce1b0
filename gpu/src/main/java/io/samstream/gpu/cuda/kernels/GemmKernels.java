package io.samstream.gpu.cuda.kernels;

import static io.samstream.gpu.cuda.LaunchChecks.ptr;
import static io.samstream.gpu.cuda.LaunchChecks.require;
import static io.samstream.gpu.cuda.LaunchChecks.requireBf16;

import java.util.Locale;

import org.slf4j.LoggerFactory;

import jcuda.Pointer;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.TensorMaps;

/**
 * The dense GEMM launchers: {@code c[m,n] = a[m,k] · w[n,k]ᵀ (+ bias[n]) (→ GELU) (+ residual[m,n])}, bf16 in and out,
 * fp32 accumulation (gemm.cuh, gemm_sm90.cuh, gemm_sm90_tma.cuh). Each launch checks shapes, sizes and alignment
 * first, so a wrong call fails in Java with the numbers named. The tile comes from {@link TileChoice} unless named.
 */
public final class GemmKernels {
    /** Epilogue flags of the GEMM kernels (gemm.cuh). */
    static final int EPI_BIAS = 1, EPI_GELU = 2, EPI_RESIDUAL = 4;

    /**
     * The GEMM tiles compiled into the fatbin. {@code T128x128x64}: the mma.sync kernel (gemm.cuh), CTA tile 128 x 128,
     * K step 64, 64 x 64 warp tiles, a 3-stage cp.async ring; runs on every target. On compute capability 9.0 only
     * ({@link GemmKernels#supports}): {@code HTS...}, the Hopper kernel fed by TMA from tensor maps, C staged in shared memory and
     * written by TMA stores, persistent (gemm_sm90_tma.cuh); {@code HTP128x128}, the same with ping-pong consumers;
     * {@code H...}, the cp.async-fed Hopper kernel (gemm_sm90.cuh), one CTA per output tile: the fallback where tensor
     * maps cannot be made. The variants that lost their benchmarks are gone (bench/results/README.md).
     */
    public enum GemmTile {
        T128x128x64(128, 128, 64, 3),
        H128x256(128, 256, 4),
        H128x128(128, 128, 6),
        /** C written by TMA stores: the consumers stage each 64 x 128 of C in shared memory and go on to their next tile. */
        HTS128x256("tmas", 128, 256, 4),
        HTS128x128("tmas", 128, 128, 6),
        /** Ping-pong consumers: each consumer warpgroup computes whole 128 x 128 tiles, in turn with the other. */
        HTP128x128("tmap", 128, 128, 6);

        final String symbol;
        final int bm, bn, threads, smem;
        final boolean hopper;
        /** Fed by TMA from tensor maps, C written by TMA stores (gemm_sm90_tma.cuh). */
        final boolean tma;

        GemmTile(int bm, int bn, int bk, int stages) {
            this.symbol = "samstream_gemm_bf16_" + bm + "x" + bn + "x" + bk;
            this.bm = bm;
            this.bn = bn;
            this.threads = (bm / 64) * (bn / 64) * 32;
            this.smem = stages * (bm + bn) * (bk + 8) * 2;
            this.hopper = false;
            this.tma = false;
        }

        /** gemm_sm90::Config::SMEM_BYTES: tiles + 2 mbarriers per stage + 1024 B alignment slack. */
        GemmTile(int bm, int bn, int stages) {
            this.symbol = "samstream_gemm_sm90_" + bm + "x" + bn;
            this.bm = bm;
            this.bn = bn;
            this.threads = 384;
            this.smem = stages * (bm + bn) * 64 * 2 + 2 * stages * 8 + 1024;
            this.hopper = true;
            this.tma = false;
        }

        /**
         * A TMA tile ("tmas": cooperative consumers, "tmap": ping-pong). gemm_sm90_tma::Config<BN, STAGES, true,
         * PINGPONG>::SMEM_BYTES: tiles + 1024 (barriers, padded) + 2 x 16 KB staging buffers + 1024 B alignment slack.
         */
        GemmTile(String pipeline, int bm, int bn, int stages) {
            this.symbol = (pipeline.equals("tmap") ? "samstream_gemm_sm90tmap_" : "samstream_gemm_sm90tmas_") + bm + "x" + bn;
            this.bm = bm;
            this.bn = bn;
            this.threads = 384;
            this.smem = stages * (bm + bn) * 64 * 2 + 1024 + 2 * 2 * 64 * 64 * 2 + 1024;
            this.hopper = true;
            this.tma = true;
        }

        /** Rows of C per CTA tile. */
        public int bm() {
            return bm;
        }

        /** True for the tiles fed by TMA from tensor maps ({@code HTS...}, {@code HTP...}). */
        boolean tma() {
            return tma;
        }

        /** True for the warpgroup-MMA (sm_90a) kernels. */
        public boolean hopper() {
            return hopper;
        }
    }

    private final CudaKernels kernels;

    /** The epilogue flags of a product with this bias, GELU and residual (the same for every GEMM kernel). */
    static int epilogue(DeviceBuffer bias, boolean gelu, DeviceBuffer residual) {
        return (bias != null ? EPI_BIAS : 0) | (gelu ? EPI_GELU : 0) | (residual != null ? EPI_RESIDUAL : 0);
    }

    /**
     * The checks both GEMMs make: positive dimensions, a tile that runs here, 16-byte rows, and A, C, the bias and
     * the residual (either may be null) large enough and aligned. The weight's are the caller's.
     */
    void requireGemm(String op, int m, int n, int k, boolean tileRuns, Object tile, DeviceBuffer a, DeviceBuffer c,
                     DeviceBuffer bias, DeviceBuffer residual) {
        require(m > 0 && n > 0 && k > 0, op + ": dimensions must be positive");
        require(tileRuns, op + ": tile " + tile + " needs compute capability 9.0 (Hopper), this GPU is "
                + kernels.context().info().describe());
        require(k % 8 == 0, op + ": k must be a multiple of 8 (16-byte rows)");
        require(n % 8 == 0, op + ": n must be a multiple of 8");
        requireBf16(a, (long) m * k, op, "a");
        requireBf16(c, (long) m * n, op, "c");
        if (bias != null) {
            requireBf16(bias, n, op, "bias");
        }
        if (residual != null) {
            requireBf16(residual, (long) m * n, op, "residual");
        }
    }

    /** The GemmKernels of {@code kernels} (made at the first call, which looks its kernels up). */
    public static GemmKernels of(CudaKernels kernels) {
        return kernels.family(GemmKernels.class, GemmKernels::new);
    }

    private GemmKernels(CudaKernels kernels) {
        this.kernels = kernels;
        for (GemmTile t : GemmTile.values()) {
            kernels.add(t.symbol, t.smem);
        }
    }

    /**
     * {@code c[m,n] = a[m,k] · w[n,k]ᵀ (+ bias[n]) (→ GELU) (+ residual[m,n])}, the tile chosen for the shape.
     *
     * @param bias     may be null
     * @param residual may be null; may be the same buffer as {@code c} (in-place {@code x += f(x)})
     * @param gelu     apply exact (erf) GELU after the bias, before the residual
     */
    public void run(CudaStream stream, DeviceBuffer a, DeviceBuffer w, DeviceBuffer bias, DeviceBuffer residual,
                    DeviceBuffer c, int m, int n, int k, boolean gelu) {
        run(stream, a, w, bias, residual, c, m, n, k, gelu, defaultTile(m, n, k, gelu));
    }

    /** True when {@code tile} can run on this GPU (the Hopper tiles need compute capability 9.0). */
    public boolean supports(GemmTile tile) {
        return !tile.hopper || kernels.hopper();
    }

    /**
     * The tile for a shape, {@link #defaultTile(int, int, int, boolean)} of a short-K product without GELU.
     */
    public GemmTile defaultTile(int m, int n) {
        return defaultTile(m, n, 0, false);
    }

    /**
     * The tile for a product of depth {@code k} with or without the GELU epilogue ({@link TileChoice}): on compute
     * capability 9.0 the TMA kernel, ping-pong ({@link GemmTile#HTP128x128}) or cooperative 128 x 128 / 128 x 256,
     * the cp.async-fed tile of that width where tensor maps cannot be made; elsewhere the mma.sync 128 x 128 x 64.
     */
    public GemmTile defaultTile(int m, int n, int k, boolean gelu) {
        if (!kernels.hopper()) {
            return GemmTile.T128x128x64;
        }
        TileChoice.Choice choice = TileChoice.choose(m, n, k, gelu, kernels.context().info().multiprocessors());
        if (!kernels.tmaAvailable()) {
            return choice.narrow() ? GemmTile.H128x128 : GemmTile.H128x256;
        }
        return choice.pingPong() ? GemmTile.HTP128x128 : choice.narrow() ? GemmTile.HTS128x128 : GemmTile.HTS128x256;
    }

    /** As the method above, on the tile named (tests and benchmarks). */
    public void run(CudaStream stream, DeviceBuffer a, DeviceBuffer w, DeviceBuffer bias, DeviceBuffer residual,
                    DeviceBuffer c, int m, int n, int k, boolean gelu, GemmTile tile) {
        String op = String.format(Locale.ROOT, "gemm m=%d n=%d k=%d", m, n, k);
        requireGemm(op, m, n, k, supports(tile), tile, a, c, bias, residual);
        requireBf16(w, (long) n * k, op, "w");
        if (tile.tma() && !CudaKernels.tmaCanMap(a, w, c)) {
            // A buffer the TMA tiles cannot describe (its address unknown or not 16-byte aligned): the same tile
            // width on the cp.async-fed kernel, which reads plain pointers, rather than a failed forward pass.
            GemmTile fallback = tile.bn == 256 ? GemmTile.H128x256 : GemmTile.H128x128;
            if (kernels.firstTmaFallback()) {
                LoggerFactory.getLogger(GemmKernels.class).warn("{}: {} cannot map a buffer ({}, {}, {}), running {}"
                        + " (logged once)", op, tile, a, w, c, fallback);
            }
            tile = fallback;
        }
        int gridX = (n + tile.bn - 1) / tile.bn, gridY = (m + tile.bm - 1) / tile.bm;
        require(gridY <= 65535, op + ": m too large for one launch");
        if (tile.hopper) {
            // A 1-D grid over the output tiles (column tiles fastest), one CTA per tile.
            long tiles = (long) gridX * gridY;
            require(tiles <= Integer.MAX_VALUE, op + ": too many output tiles for one launch");
            gridX = (int) tiles;
            gridY = 1;
        }
        int epilogue = epilogue(bias, gelu, residual);
        Pointer opA, opW, opC = null;
        if (tile.tma()) {
            // A, W and C as tensor maps (by value; C in boxes of 64 x 64); persistent: at most one CTA per SM, each
            // walking tiles.
            long bands = (m + tile.bm - 1) / tile.bm;
            long outputTiles = bands * ((n + tile.bn - 1) / tile.bn);
            gridX = (int) Math.min(outputTiles, kernels.context().info().multiprocessors());
            TensorMaps maps = kernels.tensorMaps();
            opA = Pointer.to(maps.bf16RowMajor(a, m, k, tile.bm, op + " a"));
            opW = Pointer.to(maps.bf16RowMajor(w, n, k, tile.bn, op + " w"));
            opC = Pointer.to(maps.bf16RowMajor(c, m, n, 64, op + " c"));
        } else {
            opA = ptr(a);
            opW = ptr(w);
        }
        Pointer params = opC != null
                ? Pointer.to(opA, opW, opC, ptr(bias), ptr(residual), Pointer.to(new int[] {m}),
                        Pointer.to(new int[] {n}), Pointer.to(new int[] {k}), Pointer.to(new int[] {epilogue}))
                : Pointer.to(opA, opW, ptr(bias), ptr(residual), ptr(c), Pointer.to(new int[] {m}),
                        Pointer.to(new int[] {n}), Pointer.to(new int[] {k}), Pointer.to(new int[] {epilogue}));
        kernels.launch(tile.symbol, gridX, gridY, 1, tile.threads, tile.smem, stream, params, op);
    }
}
