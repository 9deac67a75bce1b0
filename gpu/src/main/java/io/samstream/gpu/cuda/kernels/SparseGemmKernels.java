package io.samstream.gpu.cuda.kernels;

import static io.samstream.gpu.cuda.LaunchChecks.ptr;
import static io.samstream.gpu.cuda.LaunchChecks.require;
import static io.samstream.gpu.cuda.LaunchChecks.requireBf16;
import static io.samstream.gpu.cuda.LaunchChecks.requireBytes;

import java.util.Locale;

import org.slf4j.LoggerFactory;

import jcuda.Pointer;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.TensorMaps;

/**
 * The 2:4-sparse GEMM launchers: the dense GEMM's function and epilogue with W pruned to 2:4 along K, on the sparse
 * tensor cores (gemm_sparse.cuh, gemm_sparse_sm90.cuh, gemm_sparse_sm90_tma.cuh). Checks as {@link GemmKernels}; the
 * tile comes from {@link TileChoice} unless named.
 */
public final class SparseGemmKernels {
    /**
     * The 2:4-sparse GEMM tiles: the mma.sp kernel (gemm_sparse.cuh; every target), CTA tile of BN weight rows
     * (output columns) x BM activation rows (output rows), 64 x 64 warp tiles, K step 64, 3 stages; the Hopper ones.
     */
    public enum SparseTile {
        S128x128(128, 128),
        /**
         * Hopper (gemm_sparse_sm90.cuh, wgmma.mma_async.sp, compute capability 9.0 only): 128 x 128, 4 stages of
         * 128 k fed by a cp.async producer warpgroup, C stored from registers, 384 threads, 1-D grid. The fallback of
         * the TMA tiles where tensor maps cannot be made.
         */
        H128x128("cp"),
        /**
         * The same instruction fed by TMA (gemm_sparse_sm90_tma.cuh): A, the values and the metadata as tensor maps,
         * C staged in shared memory (transposed by stmatrix) and written by TMA stores, the residual read by TMA;
         * persistent, 3 stages, cooperative consumers.
         */
        HTS128x128("tmas"),
        /** The TMA sparse kernel with ping-pong consumers: each consumer warpgroup computes whole tiles in turn. */
        HTP128x128("tmap");

        private static final int STAGES = 3;
        final String symbol;
        final int bn, bm, threads, smem;
        final boolean hopper;
        /** Fed by TMA from tensor maps, C written by TMA stores (gemm_sparse_sm90_tma.cuh). */
        final boolean tma;

        SparseTile(int bn, int bm) {
            this.symbol = "samstream_gemm_sparse_" + bn + "x" + bm;
            this.bn = bn;
            this.bm = bm;
            this.threads = (bn / 64) * (bm / 64) * 32;
            // Same formula as gemm_sparse::Config::SMEM_BYTES: values (BK/2 + 8) + activations (BK + 8) + metadata.
            this.smem = STAGES * ((bn * 40 + bm * 72) * 2 + bn / 16 * 32 * 4);
            this.hopper = false;
            this.tma = false;
        }

        /**
         * A Hopper tile: "cp" = gemm_sparse_sm90::Config<4>::SMEM_BYTES; "tmas" / "tmap" =
         * gemm_sparse_sm90_tma::Config<PINGPONG>::SMEM_BYTES: 3 stages of 50 KB, 1 KB of barriers, the consumers'
         * staging buffers (16 KB each, 32 KB with ping-pong), 1 KB alignment slack.
         */
        SparseTile(String pipeline) {
            this.bn = 128;
            this.bm = 128;
            this.threads = 384;
            this.hopper = true;
            this.tma = !pipeline.equals("cp");
            int stage = 128 * 128 + 2 * 128 * 128 + 128 / 16 * 4 * 64;
            this.symbol = switch (pipeline) {
                case "cp" -> "samstream_gemm_sparse_sm90_128x128";
                case "tmas" -> "samstream_gemm_sparse_sm90tmas_128x128";
                default -> "samstream_gemm_sparse_sm90tmap_128x128";
            };
            this.smem = switch (pipeline) {
                case "cp" -> 4 * stage + 2 * 4 * 8 + 1024;
                case "tmas" -> 3 * stage + 1024 + 2 * 2 * 64 * 64 * 2 + 1024;
                default -> 3 * stage + 1024 + 2 * 4 * 64 * 64 * 2 + 1024;
            };
        }

        public boolean hopper() {
            return hopper;
        }
    }

    /**
     * A 2:4-sparse Linear weight {@code [n, k]} on the device, in the layout of
     * {@link io.samstream.gpu.sparse.TwoFourWeights}: {@code values} bf16 {@code [roundUp(n, 16), roundUp(k, 64) / 2]},
     * {@code metadata} u32 {@code [roundUp(n, 16) / 16][roundUp(k, 64) / 32][16]}.
     */
    public record SparseWeight(DeviceBuffer values, DeviceBuffer metadata, int n, int k) {
        long valueCount() {
            return (long) roundUp(n, 16) * roundUp(k, 64) / 2;
        }

        long metadataBytes() {
            return (long) roundUp(n, 16) / 16 * (roundUp(k, 64) / 32) * 64;
        }

        private static int roundUp(int v, int m) {
            return (v + m - 1) / m * m;
        }
    }

    private final CudaKernels kernels;
    private final GemmKernels gemm;

    /** The SparseGemmKernels of {@code kernels} (made at the first call, which looks its kernels up). */
    public static SparseGemmKernels of(CudaKernels kernels) {
        return kernels.family(SparseGemmKernels.class, SparseGemmKernels::new);
    }

    private SparseGemmKernels(CudaKernels kernels) {
        this.kernels = kernels;
        this.gemm = GemmKernels.of(kernels);
        for (SparseTile t : SparseTile.values()) {
            kernels.add(t.symbol, t.smem);
        }
    }

    /**
     * {@code c[m,n] = a[m,k] · wᵀ (+ bias[n]) (→ GELU) (+ residual[m,n])} with {@code w} 2:4-sparse on the
     * sparse tensor cores; the same epilogue and argument rules as {@link GemmKernels#run}.
     */
    public void run(CudaStream stream, DeviceBuffer a, SparseWeight w, DeviceBuffer bias, DeviceBuffer residual,
                    DeviceBuffer c, int m, boolean gelu, SparseTile tile) {
        int n = w.n(), k = w.k();
        String op = String.format(Locale.ROOT, "gemmSparse m=%d n=%d k=%d", m, n, k);
        gemm.requireGemm(op, m, n, k, supports(tile), tile, a, c, bias, residual);
        requireBf16(w.values(), w.valueCount(), op, "values");
        requireBytes(w.metadata(), w.metadataBytes(), op, "metadata");
        if (tile.tma && !(kernels.tmaAvailable() && CudaKernels.tmaCanMap(a, w.values(), w.metadata(), c, residual))) {
            // As for the dense TMA tiles: the cp.async Hopper tile reads plain pointers.
            if (kernels.firstTmaFallback()) {
                LoggerFactory.getLogger(SparseGemmKernels.class).warn("{}: {} cannot map its buffers, running {} (logged"
                        + " once)", op, tile, SparseTile.H128x128);
            }
            tile = SparseTile.H128x128;
        }
        int gridX = (n + tile.bn - 1) / tile.bn, gridY = (m + tile.bm - 1) / tile.bm;
        require(gridY <= 65535, op + ": m too large for one launch");
        int epilogue = GemmKernels.epilogue(bias, gelu, residual);
        Pointer params;
        if (tile.tma) {
            // Persistent: at most one CTA per SM, each walking output tiles. The maps: A and the values in boxes of 128
            // rows x 64, the metadata words ([np / 16, kp / 2] u32, one row per 16-row block) 8 rows x 64, C and the
            // residual 64 x 64 (without a residual the kernel never reads map_r: C's map stands in).
            long tiles = (long) gridX * gridY;
            gridX = (int) Math.min(tiles, kernels.context().info().multiprocessors());
            gridY = 1;
            int np = (n + 15) / 16 * 16, kp = (k + 63) / 64 * 64;
            TensorMaps maps = kernels.tensorMaps();
            byte[] mapC = maps.bf16RowMajor(c, m, n, 64, op + " c");
            params = Pointer.to(Pointer.to(maps.bf16RowMajor(a, m, k, tile.bm, op + " a")),
                    Pointer.to(maps.bf16RowMajor(w.values(), np, kp / 2, tile.bn, op + " values")),
                    Pointer.to(maps.u32RowMajor(w.metadata(), np / 16, kp / 2, tile.bn / 16, 64, op + " metadata")),
                    Pointer.to(mapC),
                    Pointer.to(residual != null ? maps.bf16RowMajor(residual, m, n, 64, op + " residual") : mapC),
                    ptr(bias), Pointer.to(new int[] {m}), Pointer.to(new int[] {n}), Pointer.to(new int[] {k}),
                    Pointer.to(new int[] {epilogue}));
        } else {
            if (tile.hopper) {   // 1-D grid: one CTA per output tile
                gridX = gridX * gridY;
                gridY = 1;
            }
            params = Pointer.to(ptr(a), ptr(w.values()), ptr(w.metadata()), ptr(bias), ptr(residual), ptr(c),
                    Pointer.to(new int[] {m}), Pointer.to(new int[] {n}), Pointer.to(new int[] {k}),
                    Pointer.to(new int[] {epilogue}));
        }
        kernels.launch(tile.symbol, gridX, gridY, 1, tile.threads, tile.smem, stream, params, op);
    }

    /** True when {@code tile} can run on this GPU (the Hopper sparse tiles need compute capability 9.0). */
    public boolean supports(SparseTile tile) {
        return !tile.hopper || kernels.hopper();
    }

    /** {@link #defaultTile(int, int, int, boolean)} of a short product without GELU. */
    public SparseTile defaultTile(int m, int n) {
        return defaultTile(m, n, 0, false);
    }

    /**
     * The sparse tile for a product of depth {@code k} with or without the GELU epilogue ({@link TileChoice}): on
     * compute capability 9.0 the TMA-fed kernel with ping-pong ({@link SparseTile#HTP128x128}) or cooperative
     * ({@link SparseTile#HTS128x128}) consumers, the cp.async one where tensor maps cannot be made; elsewhere the
     * mma.sp 128 x 128 (two CTAs per SM).
     */
    public SparseTile defaultTile(int m, int n, int k, boolean gelu) {
        if (!kernels.hopper()) {
            return SparseTile.S128x128;
        }
        if (!kernels.tmaAvailable()) {
            return SparseTile.H128x128;
        }
        boolean pingPong = TileChoice.choose(m, n, k, gelu, kernels.context().info().multiprocessors()).pingPong();
        return pingPong ? SparseTile.HTP128x128 : SparseTile.HTS128x128;
    }
}
