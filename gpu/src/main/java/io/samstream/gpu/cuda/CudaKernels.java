package io.samstream.gpu.cuda;

import static jcuda.driver.JCudaDriver.cuFuncGetAttribute;
import static jcuda.driver.JCudaDriver.cuFuncSetAttribute;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleGetGlobal;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuModuleUnload;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import org.slf4j.LoggerFactory;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUfunction_attribute;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;

/**
 * The kernels of {@code gpu/src/main/cuda}, loaded from the fatbin the build bundles, with one typed
 * launch method per operation. Each method checks shapes, sizes and alignment against the buffers before
 * it queues anything, so a wrong call fails in Java with the operation and the numbers named, never as
 * a garbled result or an illegal address later.
 *
 * <p>All tensors are bf16, row-major, contiguous. Launches are asynchronous on the given stream.
 */
public final class CudaKernels implements AutoCloseable {
    /** Class-path location of the fatbin built by {@code gpu/src/main/cuda/build-fatbin.sh}. */
    public static final String RESOURCE = "io/samstream/gpu/cuda/samstream_kernels.fatbin";
    /** Must match {@code samstream_kernels_abi} in samstream_kernels.cu. */
    static final int ABI_VERSION = 4;

    /** Epilogue flags of the GEMM kernel (gemm.cuh). */
    static final int EPI_BIAS = 1, EPI_GELU = 2, EPI_RESIDUAL = 4;

    /**
     * The GEMM tiles compiled into the fatbin. {@code T128x128x64}: the mma.sync kernel (gemm.cuh), CTA tile 128 x 128,
     * K step 64, 64 x 64 warp tiles, a 3-stage cp.async ring; runs on every target. On compute capability 9.0 only
     * ({@link #supports}): {@code HTS...}, the Hopper kernel fed by TMA from tensor maps, C staged in shared memory and
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

    private static final String LAYERNORM = "samstream_layernorm_bf16";
    private static final String PATCHIFY = "samstream_patchify_f32", ADD_PERIODIC = "samstream_add_periodic_bf16",
            IM2COL3X3 = "samstream_im2col3x3_bf16", TOKENS_TO_CHW = "samstream_tokens_to_chw_f32";
    /** Head dims with an attention kernel (vit_b / vit_l: 64, vit_h: 80; 16 and 32 for small SAM-family models). */
    static final int[] ATTN_HEAD_DIMS = {16, 32, 64, 80};
    /** CTAs per SM the grid-stride kernels are launched with (a wave or two fills the H200). */
    private static final int ELEMENTWISE_THREADS = 256;
    private static final int LAYERNORM_ROWS_PER_CTA = 8;
    private static final int LAYERNORM_MAX_C = 2048;
    /** samstream_layernorm_bf16_v1 .. _v5: rows of at most 256 x N columns (vit_b 768: v3, vit_h 1280: v5). */
    private static final int LAYERNORM_NARROW_VECS = 5;
    /**
     * Attention kernels: "row" (key tiles of one sequence row, for sequences wider than 32 tokens: global
     * attention; 4 warps, 64 queries per CTA) and "rows" (several rows per key tile: 14 x 14 windows;
     * 7 warps, 112 queries per CTA).
     */
    private static final int ATTN_WARPS_ROW = 4, ATTN_WARPS_ROWS = 7;
    private static final int ATTN_BKV = 64, ATTN_MAX_SIDE = 64;
    /**
     * The Hopper attention kernel (attention_sm90.cuh): global attention, head dim 64; 512 threads (a producer and
     * 3 consumer warpgroups), 192 queries per CTA. Shared memory = attention_sm90::Config<false>::SMEM_BYTES: Q + 5
     * stages of K and V + the tables (rows of rel_stride(64, 64) floats) + 10 mbarriers + 1024 B of alignment slack.
     */
    private static final String ATTN_SM90 = "samstream_attention_sm90_hd64";
    private static final int ATTN_SM90_QUERIES = 192, ATTN_SM90_THREADS = 512, ATTN_SM90_STAGES = 5;
    static final int ATTN_SM90_SMEM = ATTN_SM90_QUERIES * 128 + ATTN_SM90_STAGES * 2 * ATTN_BKV * 128
            + ATTN_SM90_QUERIES * (2 * ATTN_MAX_SIDE + 2) * 4 + 2 * ATTN_SM90_STAGES * 8 + 1024;
    /**
     * The windowed configuration (attention_sm90::WindowHalves; windows of 9 to 16 tokens a side, half a window per
     * CTA): 128 query slots per CTA (grid x = ceil(window² / 128)), 256 threads (2 consumer
     * warpgroups of 64 queries, no producer), two CTAs per SM. Shared memory = WindowHalves::SMEM_BYTES, asserted in
     * samstream_kernels.cu: Q + the whole window's K and V (4 tiles) + the staged Rh, Rw (2 x 32 rows of 72 bf16) +
     * the tables + 1024 B of alignment slack.
     */
    private static final String ATTN_SM90W2 = "samstream_attention_sm90w2_hd64";
    private static final int ATTN_SM90W_MIN = 9, ATTN_SM90W_MAX = 16;
    static final int ATTN_SM90W2_QUERIES = 128, ATTN_SM90W2_THREADS = 256;
    static final int ATTN_SM90W2_SMEM = ATTN_SM90W2_QUERIES * 128 + 4 * 2 * ATTN_BKV * 128
            + 2 * (2 * ATTN_SM90W_MAX) * (64 + 8) * 2 + ATTN_SM90W2_QUERIES * (2 * ATTN_SM90W_MAX + 4 + 1) * 4 + 1024;

    private final CudaContext context;
    private final CUmodule module = new CUmodule();
    private final Map<String, Kernel> kernels = new LinkedHashMap<>();
    private final Map<String, CUfunction> extraFunctions = new LinkedHashMap<>();
    private TensorMaps tensorMaps;
    private String tensorMapsProblem;   // why the tensor-map encoder could not be bound (null: bound or not tried)
    private volatile boolean tmaFallbackLogged;   // CudaKernels.gemm's fallback from a TMA tile, logged once
    private boolean closed;

    private record Kernel(String name, CUfunction function, int maxDynamicSmem, int registers) {}

    /** True when this build carries the fatbin (it does not when nvcc was absent at build time). */
    public static boolean bundled() {
        return CudaKernels.class.getClassLoader().getResource(RESOURCE) != null;
    }

    static byte[] readFatbin() {
        try (InputStream in = CudaKernels.class.getClassLoader().getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new CudaException("this build has no CUDA kernels (" + RESOURCE
                        + " is missing: nvcc was not found when the gpu module was built)");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + RESOURCE, e);
        }
    }

    /** Loads the fatbin into {@code context} and looks up every kernel. */
    public CudaKernels(CudaContext context) {
        this.context = context;
        byte[] fatbin = readFatbin();
        context.bind();
        DeviceInfo dev = context.info();
        int r = cuModuleLoadData(module, fatbin);
        if (r == CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU) {
            throw new CudaException(r, Cuda.errorName(r), "loading the CUDA kernels: the fatbin has code for sm_80/86/89/90a"
                    + " and compute_80 PTX, none of which runs on " + dev.describe());
        }
        Cuda.check(r, () -> "loading the CUDA kernels (" + Cuda.bytes(fatbin.length) + " fatbin) on " + dev.describe());
        checkAbi();

        for (GemmTile t : GemmTile.values()) {
            add(t.symbol, t.smem);
        }
        for (SparseTile t : SparseTile.values()) {
            add(t.symbol, t.smem);
        }
        add(LAYERNORM, 0);
        for (int vec = 1; vec <= LAYERNORM_NARROW_VECS; vec++) {
            add(LAYERNORM + "_v" + vec, 0);
        }
        for (String name : new String[] {PATCHIFY, ADD_PERIODIC, IM2COL3X3, TOKENS_TO_CHW}) {
            add(name, 0);
        }
        for (int hd : ATTN_HEAD_DIMS) {
            for (boolean oneRow : new boolean[] {true, false}) {
                int most = 0;
                for (int seqW = oneRow ? ATTN_BKV / 2 + 1 : 1; seqW <= (oneRow ? ATTN_MAX_SIDE : ATTN_BKV / 2); seqW++) {
                    most = Math.max(most, attentionSmem(hd, oneRow ? ATTN_WARPS_ROW : ATTN_WARPS_ROWS, ATTN_MAX_SIDE, seqW));
                }
                add(attentionSymbol(hd, oneRow), most);
            }
        }
        add(ATTN_SM90, ATTN_SM90_SMEM);
        add(ATTN_SM90W2, ATTN_SM90W2_SMEM);
    }

    private void checkAbi() {
        CUdeviceptr ptr = new CUdeviceptr();
        long[] size = new long[1];
        Cuda.check(cuModuleGetGlobal(ptr, size, module, "samstream_kernels_abi"),
                "looking up samstream_kernels_abi in the fatbin");
        int[] abi = new int[1];
        Cuda.check(cuMemcpyDtoH(Pointer.to(abi), ptr, 4), "reading samstream_kernels_abi");
        if (abi[0] != ABI_VERSION) {
            throw new CudaException("the bundled CUDA kernels have ABI version " + abi[0] + ", this code expects "
                    + ABI_VERSION + ": rebuild the gpu module");
        }
    }

    /** Looks a kernel up and allows it as much dynamic shared memory as it can need (up to the device's limit). */
    private void add(String name, int smemNeeded) {
        CUfunction f = new CUfunction();
        Cuda.check(cuModuleGetFunction(f, module, name), "looking up kernel " + name + " in the fatbin");
        int allowed = Math.min(smemNeeded, context.info().sharedMemPerBlockOptin());
        if (allowed > 48 * 1024) {
            Cuda.check(cuFuncSetAttribute(f, CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, allowed),
                    "allowing kernel " + name + " " + allowed + " B of shared memory");
        }
        if (smemNeeded > 0) {
            // All of L1 as shared memory, so that as many CTAs fit as the registers allow.
            Cuda.check(cuFuncSetAttribute(f, CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100),
                    "setting the shared-memory carveout of " + name);
        }
        int[] regs = new int[1];
        Cuda.check(cuFuncGetAttribute(regs, CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, f),
                "reading the register count of " + name);
        kernels.put(name, new Kernel(name, f, Math.max(allowed, 48 * 1024), regs[0]));
    }

    /**
     * A kernel of the fatbin by its extern "C" name, for the launchers of other classes of this package
     * ({@link ImageOpsKernels}); looked up once. Fails, naming the kernel, when the fatbin lacks it.
     */
    synchronized CUfunction function(String name) {
        if (closed) {
            throw new IllegalStateException("CUDA kernels are closed");
        }
        CUfunction f = extraFunctions.get(name);
        if (f == null) {
            f = new CUfunction();
            context.bind();
            Cuda.check(cuModuleGetFunction(f, module, name), "looking up kernel " + name
                    + " in the fatbin (a build older than the code? rebuild the gpu module)");
            extraFunctions.put(name, f);
        }
        return f;
    }

    /** One line per kernel: name, registers, shared memory allowed. For logs. */
    public String describe() {
        StringBuilder sb = new StringBuilder("CUDA kernels on " + context.info().describe() + ":");
        for (Kernel k : kernels.values()) {
            sb.append(String.format(Locale.ROOT, "%n  %-32s %3d registers, up to %3d KiB shared", k.name, k.registers,
                    k.maxDynamicSmem / 1024));
        }
        return sb.toString();
    }

    public CudaContext context() {
        return context;
    }

    // ------------------------------------------------------------------------------------------------
    // GEMM
    // ------------------------------------------------------------------------------------------------

    /**
     * {@code c[m,n] = a[m,k] · w[n,k]ᵀ (+ bias[n]) (→ GELU) (+ residual[m,n])}, the tile chosen for the shape.
     *
     * @param bias     may be null
     * @param residual may be null; may be the same buffer as {@code c} (in-place {@code x += f(x)})
     * @param gelu     apply exact (erf) GELU after the bias, before the residual
     */
    public void gemm(CudaStream stream, DeviceBuffer a, DeviceBuffer w, DeviceBuffer bias, DeviceBuffer residual,
                     DeviceBuffer c, int m, int n, int k, boolean gelu) {
        gemm(stream, a, w, bias, residual, c, m, n, k, gelu, defaultTile(m, n, k, gelu));
    }

    /** True when {@code tile} can run on this GPU (the Hopper tiles need compute capability 9.0). */
    public boolean supports(GemmTile tile) {
        DeviceInfo dev = context.info();
        return !tile.hopper || (dev.ccMajor() == 9 && dev.ccMinor() == 0);
    }

    /**
     * The tile for a shape, {@link #defaultTile(int, int, int, boolean)} of a short-K product without GELU.
     */
    public GemmTile defaultTile(int m, int n) {
        return defaultTile(m, n, 0, false);
    }

    /**
     * The tile for a product of depth {@code k} with or without the GELU epilogue. On compute capability 9.0 the TMA
     * kernel: the ping-pong tile ({@link GemmTile#HTP128x128}) for K < 2048 without GELU, where the cooperative tile's
     * epilogue stalls the tensor cores for a large share of a short mainloop; else the cooperative TMA-store tile, 128
     * x 256 unless 128 x 128 fills the GPU's waves clearly better; the cp.async-fed tile of that width where tensor
     * maps cannot be made. Elsewhere: the mma.sync 128 x 128 x 64 tile. Measurements: bench/results/README.md.
     */
    public GemmTile defaultTile(int m, int n, int k, boolean gelu) {
        if (!supports(GemmTile.H128x256)) {
            return GemmTile.T128x128x64;
        }
        int sms = context.info().multiprocessors();
        long rows = (m + 127) / 128;
        long wide = rows * ((n + 255) / 256), narrow = rows * ((n + 127) / 128);
        // Time ~ waves x tile work; a 128-wide tile does half the work of a 256-wide one, at ~15% less efficiency.
        double wideCost = Math.ceil((double) wide / sms) * 2.0, narrowCost = Math.ceil((double) narrow / sms) * 1.15;
        boolean narrowWins = narrowCost < wideCost;
        if (!tmaAvailable()) {
            return narrowWins ? GemmTile.H128x128 : GemmTile.H128x256;
        }
        return !gelu && k < 2048 ? GemmTile.HTP128x128 : narrowWins ? GemmTile.HTS128x128 : GemmTile.HTS128x256;
    }

    public void gemm(CudaStream stream, DeviceBuffer a, DeviceBuffer w, DeviceBuffer bias, DeviceBuffer residual,
                     DeviceBuffer c, int m, int n, int k, boolean gelu, GemmTile tile) {
        String op = String.format(Locale.ROOT, "gemm m=%d n=%d k=%d", m, n, k);
        require(m > 0 && n > 0 && k > 0, op + ": dimensions must be positive");
        require(supports(tile), op + ": tile " + tile + " needs compute capability 9.0 (Hopper), this GPU is "
                + context.info().describe());
        require(k % 8 == 0, op + ": k must be a multiple of 8 (16-byte rows)");
        require(n % 8 == 0, op + ": n must be a multiple of 8");
        requireBf16(a, (long) m * k, op, "a");
        requireBf16(w, (long) n * k, op, "w");
        requireBf16(c, (long) m * n, op, "c");
        if (bias != null) {
            requireBf16(bias, n, op, "bias");
        }
        if (residual != null) {
            requireBf16(residual, (long) m * n, op, "residual");
        }
        if (tile.tma() && !tmaCanMap(a, w, c)) {
            // A buffer the TMA tiles cannot describe (its address unknown or not 16-byte aligned): the same tile
            // width on the cp.async-fed kernel, which reads plain pointers, rather than a failed forward pass.
            GemmTile fallback = tile.bn == 256 ? GemmTile.H128x256 : GemmTile.H128x128;
            if (!tmaFallbackLogged) {
                tmaFallbackLogged = true;
                LoggerFactory.getLogger(CudaKernels.class).warn("{}: {} cannot map a buffer ({}, {}, {}), running {}"
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
        int epilogue = (bias != null ? EPI_BIAS : 0) | (gelu ? EPI_GELU : 0) | (residual != null ? EPI_RESIDUAL : 0);
        Pointer opA, opW, opC = null;
        if (tile.tma()) {
            // A, W and C as tensor maps (by value; C in boxes of 64 x 64); persistent: at most one CTA per SM, each
            // walking tiles.
            long bands = (m + tile.bm - 1) / tile.bm;
            long clusterTiles = bands * ((n + tile.bn - 1) / tile.bn);
            gridX = (int) Math.min(clusterTiles, context.info().multiprocessors());
            TensorMaps maps = tensorMaps();
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
        launch(tile.symbol, gridX, gridY, 1, tile.threads, tile.smem, stream, params, op);
    }

    /**
     * Whether tensor maps can describe these buffers (null ones are not mapped): their device addresses are known
     * ({@link DeviceMemoryPool} reads the pool's) and 16-byte aligned, as {@code cuTensorMapEncodeTiled} requires.
     */
    static boolean tmaCanMap(DeviceBuffer... buffers) {
        for (DeviceBuffer b : buffers) {
            if (b != null && (b.baseAddress() < 0 || (b.baseAddress() + b.offset()) % 16 != 0)) {
                return false;
            }
        }
        return true;
    }

    /** The tensor-map encoder of the TMA GEMM, bound at its first use (JNA; see {@link TensorMaps}). */
    private synchronized TensorMaps tensorMaps() {
        if (tensorMaps == null) {
            tensorMaps = TensorMaps.open();
        }
        return tensorMaps;
    }

    /**
     * True when the TMA tiles can run here: compute capability 9.0 and the driver's tensor-map encoder bound. When
     * it cannot be bound, says why once (the log) and {@link #defaultTile} falls back to the cp.async-fed tiles.
     */
    public synchronized boolean tmaAvailable() {
        if (!supports(GemmTile.HTS128x256)) {
            return false;
        }
        if (tensorMaps == null && tensorMapsProblem == null) {
            try {
                tensorMaps();
            } catch (CudaException e) {
                tensorMapsProblem = e.getMessage();
                LoggerFactory.getLogger(CudaKernels.class).warn("TMA GEMM unavailable, using the cp.async Hopper GEMM: {}",
                        tensorMapsProblem);
            }
        }
        return tensorMaps != null;
    }

    /**
     * {@code c[m,n] = a[m,k] · wᵀ (+ bias[n]) (→ GELU) (+ residual[m,n])} with {@code w} 2:4-sparse on the
     * sparse tensor cores; the same epilogue and argument rules as {@link #gemm}.
     */
    public void gemmSparse(CudaStream stream, DeviceBuffer a, SparseWeight w, DeviceBuffer bias, DeviceBuffer residual,
                           DeviceBuffer c, int m, boolean gelu, SparseTile tile) {
        int n = w.n(), k = w.k();
        String op = String.format(Locale.ROOT, "gemmSparse m=%d n=%d k=%d", m, n, k);
        require(m > 0 && n > 0 && k > 0, op + ": dimensions must be positive");
        require(supports(tile), op + ": tile " + tile + " needs compute capability 9.0 (Hopper), this GPU is "
                + context.info().describe());
        require(k % 8 == 0, op + ": k must be a multiple of 8 (16-byte rows)");
        require(n % 8 == 0, op + ": n must be a multiple of 8");
        requireBf16(a, (long) m * k, op, "a");
        requireBf16(w.values(), w.valueCount(), op, "values");
        requireBytes(w.metadata(), w.metadataBytes(), op, "metadata");
        requireBf16(c, (long) m * n, op, "c");
        if (bias != null) {
            requireBf16(bias, n, op, "bias");
        }
        if (residual != null) {
            requireBf16(residual, (long) m * n, op, "residual");
        }
        if (tile.tma && !(tmaAvailable() && tmaCanMap(a, w.values(), w.metadata(), c, residual))) {
            // As for the dense TMA tiles: the cp.async Hopper tile reads plain pointers.
            if (!tmaFallbackLogged) {
                tmaFallbackLogged = true;
                LoggerFactory.getLogger(CudaKernels.class).warn("{}: {} cannot map its buffers, running {} (logged"
                        + " once)", op, tile, SparseTile.H128x128);
            }
            tile = SparseTile.H128x128;
        }
        int gridX = (n + tile.bn - 1) / tile.bn, gridY = (m + tile.bm - 1) / tile.bm;
        require(gridY <= 65535, op + ": m too large for one launch");
        int epilogue = (bias != null ? EPI_BIAS : 0) | (gelu ? EPI_GELU : 0) | (residual != null ? EPI_RESIDUAL : 0);
        Pointer params;
        if (tile.tma) {
            // Persistent: at most one CTA per SM, each walking output tiles. The maps: A and the values in boxes of 128
            // rows x 64, the metadata words ([np / 16, kp / 2] u32, one row per 16-row block) 8 rows x 64, C and the
            // residual 64 x 64 (without a residual the kernel never reads map_r: C's map stands in).
            long tiles = (long) gridX * gridY;
            gridX = (int) Math.min(tiles, context.info().multiprocessors());
            gridY = 1;
            int np = (n + 15) / 16 * 16, kp = (k + 63) / 64 * 64;
            TensorMaps maps = tensorMaps();
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
        launch(tile.symbol, gridX, gridY, 1, tile.threads, tile.smem, stream, params, op);
    }

    /** True when {@code tile} can run on this GPU (the Hopper sparse tiles need compute capability 9.0). */
    public boolean supports(SparseTile tile) {
        DeviceInfo dev = context.info();
        return !tile.hopper || (dev.ccMajor() == 9 && dev.ccMinor() == 0);
    }

    /** {@link #defaultSparseTile(int, int, int, boolean)} of a short product without GELU. */
    public SparseTile defaultSparseTile(int m, int n) {
        return defaultSparseTile(m, n, 0, false);
    }

    /**
     * The sparse tile for a product of depth {@code k} with or without the GELU epilogue. On compute capability 9.0
     * the TMA-fed kernel, with the rule of the dense GEMM ({@link #defaultTile(int, int, int, boolean)}): ping-pong
     * consumers ({@link SparseTile#HTP128x128}) for K < 2048 without GELU, cooperative ones ({@link SparseTile#HTS128x128})
     * elsewhere; the cp.async one where tensor maps cannot be made. Elsewhere: the mma.sp 128 x 128 (two CTAs per SM).
     */
    public SparseTile defaultSparseTile(int m, int n, int k, boolean gelu) {
        if (!supports(SparseTile.H128x128)) {
            return SparseTile.S128x128;
        }
        if (!tmaAvailable()) {
            return SparseTile.H128x128;
        }
        return gelu || k >= 2048 ? SparseTile.HTS128x128 : SparseTile.HTP128x128;
    }

    // ------------------------------------------------------------------------------------------------
    // LayerNorm
    // ------------------------------------------------------------------------------------------------

    /** {@code y = LayerNorm(x)} over the last dimension {@code c} of {@code rows} rows. */
    public void layerNorm(CudaStream stream, DeviceBuffer x, DeviceBuffer gamma, DeviceBuffer beta, DeviceBuffer y,
                          int rows, int c, float eps) {
        layerNorm(stream, x, null, null, gamma, beta, y, rows, c, eps);
    }

    /**
     * {@code s = x + residual} (written to {@code sumOut} when not null), {@code y = LayerNorm(s)}.
     * With {@code residual} null, {@code s = x} and {@code sumOut} must be null. Any of x, sumOut and y
     * may be the same buffer.
     */
    public void layerNorm(CudaStream stream, DeviceBuffer x, DeviceBuffer residual, DeviceBuffer sumOut,
                          DeviceBuffer gamma, DeviceBuffer beta, DeviceBuffer y, int rows, int c, float eps) {
        String op = String.format(Locale.ROOT, "layerNorm rows=%d c=%d", rows, c);
        require(rows > 0 && c > 0, op + ": dimensions must be positive");
        require(c % 8 == 0 && c <= LAYERNORM_MAX_C, op + ": c must be a multiple of 8 and at most " + LAYERNORM_MAX_C);
        require(eps > 0 && Float.isFinite(eps), op + ": eps must be positive");
        require(residual != null || sumOut == null, op + ": sumOut needs a residual");
        long elems = (long) rows * c;
        requireBf16(x, elems, op, "x");
        requireBf16(y, elems, op, "y");
        requireBf16(gamma, c, op, "gamma");
        requireBf16(beta, c, op, "beta");
        if (residual != null) {
            requireBf16(residual, elems, op, "residual");
        }
        if (sumOut != null) {
            requireBf16(sumOut, elems, op, "sumOut");
        }
        Pointer params = Pointer.to(ptr(x), ptr(residual), ptr(sumOut), ptr(gamma), ptr(beta), ptr(y),
                Pointer.to(new int[] {rows}), Pointer.to(new int[] {c}), Pointer.to(new float[] {eps}));
        int grid = (rows + LAYERNORM_ROWS_PER_CTA - 1) / LAYERNORM_ROWS_PER_CTA;
        launch(layerNormKernel(c), grid, 1, 1, 32 * LAYERNORM_ROWS_PER_CTA, 0, stream, params, op);
    }

    /**
     * The LayerNorm kernel for rows of {@code c} columns: the one holding the fewest 8-column chunks per lane that
     * fit c (less of the row in registers, more warps resident), else the 2048-column one.
     */
    static String layerNormKernel(int c) {
        int vec = (c + 32 * 8 - 1) / (32 * 8);
        return vec <= LAYERNORM_NARROW_VECS ? LAYERNORM + "_v" + vec : LAYERNORM;
    }

    // ------------------------------------------------------------------------------------------------
    // Attention
    // ------------------------------------------------------------------------------------------------

    static String attentionSymbol(int headDim, boolean oneRow) {
        return "samstream_attention_hd" + headDim + (oneRow ? "_row" : "_rows");
    }

    /** Same formulas as attention::smem_bytes / rel_stride / rows_per_tile in attention.cuh. */
    static int attentionSmem(int headDim, int warps, int seqH, int seqW) {
        int rowsPerTile = seqW >= ATTN_BKV ? 1 : ATTN_BKV / seqW;
        int relStride = seqH + rowsPerTile + seqW + 1;
        return (16 * warps + 4 * ATTN_BKV) * (headDim + 8) * 2 + 16 * warps * relStride * 4;
    }

    /**
     * True when {@link #attention} runs on the Hopper kernel (attention_sm90.cuh): compute capability 9.0, global
     * attention (no window) over sequences wider than 32 tokens (key tiles of one sequence row), head dim 64
     * (vit_b, vit_l; vit_h's 80 stays on the mma.sync kernel).
     */
    public boolean attentionWgmma(int headDim, int window, int seqW) {
        return supports(GemmTile.H128x256) && headDim == 64 && window == 0 && seqW > ATTN_BKV / 2;
    }

    /**
     * True when {@link #attention} runs a windowed block on the Hopper kernel's windowed configuration (half a window
     * per CTA): compute capability 9.0, head dim 64, windows of 9 to 16 tokens a side (SAM's 14).
     */
    public boolean windowAttentionWgmma(int headDim, int window) {
        return supports(GemmTile.H128x256) && headDim == 64 && window >= ATTN_SM90W_MIN && window <= ATTN_SM90W_MAX;
    }

    /**
     * Multi-head self-attention of one encoder block with SAM's decomposed relative position bias, scale
     * {@code headDim^-0.5}.
     *
     * @param qkv     the qkv Linear output {@code [batch, h*w, 3*heads*headDim]} (q | k | v per token)
     * @param qkvBias that Linear's bias {@code [3*heads*headDim]}: the k, v of padded window positions; may
     *                be null (zeros) for global attention or when the grid is a multiple of the window
     * @param relH    {@code rel_pos_h} {@code [2*S_h-1, headDim]}, S_h = window, or h for global attention
     * @param relW    {@code rel_pos_w} {@code [2*S_w-1, headDim]}
     * @param out     {@code [batch, h*w, heads*headDim]}
     * @param window  window side (14 in SAM) for windowed blocks, 0 for global attention
     */
    public void attention(CudaStream stream, DeviceBuffer qkv, DeviceBuffer qkvBias, DeviceBuffer relH,
                          DeviceBuffer relW, DeviceBuffer out, int batch, int h, int w, int heads, int headDim,
                          int window) {
        boolean wgmma = window > 0 ? windowAttentionWgmma(headDim, window) : attentionWgmma(headDim, window, w);
        attention(stream, qkv, qkvBias, relH, relW, out, batch, h, w, heads, headDim, window, wgmma);
    }

    /**
     * {@link #attention} on the kernel named: {@code wgmma} the Hopper one (where {@link #attentionWgmma} or
     * {@link #windowAttentionWgmma} allows it), else the mma.sync one, which every GPU runs (tests compare the two).
     */
    public void attention(CudaStream stream, DeviceBuffer qkv, DeviceBuffer qkvBias, DeviceBuffer relH, DeviceBuffer relW,
                          DeviceBuffer out, int batch, int h, int w, int heads, int headDim, int window, boolean wgmma) {
        String op = String.format(Locale.ROOT, "attention batch=%d grid=%dx%d heads=%d head_dim=%d window=%d", batch, h, w,
                heads, headDim, window);
        require(batch > 0 && h > 0 && w > 0 && heads > 0 && window >= 0, op + ": dimensions must be positive");
        require(headDim == 16 || headDim == 32 || headDim == 64 || headDim == 80,
                op + ": head_dim must be 64 (vit_b, vit_l), 80 (vit_h), 16 or 32");
        int seqH = window > 0 ? window : h, seqW = window > 0 ? window : w;
        require(seqH <= ATTN_MAX_SIDE && seqW <= ATTN_MAX_SIDE,
                op + ": sequences of at most " + ATTN_MAX_SIDE + " x " + ATTN_MAX_SIDE + " tokens are supported");
        int windows = window > 0 ? ((h + window - 1) / window) * ((w + window - 1) / window) : 1;
        long cTotal = (long) heads * headDim;
        long tokens = (long) batch * h * w;
        requireBf16(qkv, tokens * 3 * cTotal, op, "qkv");
        requireBf16(out, tokens * cTotal, op, "out");
        requireBf16(relH, (long) (2 * seqH - 1) * headDim, op, "relH");
        requireBf16(relW, (long) (2 * seqW - 1) * headDim, op, "relW");
        if (qkvBias != null) {
            requireBf16(qkvBias, 3 * cTotal, op, "qkvBias");
        }
        float scale = (float) (1.0 / Math.sqrt(headDim));
        long gridZ = (long) batch * windows;
        require(gridZ <= 65535, op + ": batch x windows must be at most 65535");
        Pointer params = Pointer.to(ptr(qkv), ptr(qkvBias), ptr(relH), ptr(relW), ptr(out), Pointer.to(new int[] {h}),
                Pointer.to(new int[] {w}), Pointer.to(new int[] {heads}), Pointer.to(new int[] {window}),
                Pointer.to(new float[] {scale}));
        require(!wgmma || (window > 0 ? windowAttentionWgmma(headDim, window) : attentionWgmma(headDim, window, w)),
                op + ": the Hopper attention kernel does not serve this shape on " + context.info().describe());
        if (wgmma && window > 0) {   // 128 query slots of a window per CTA
            int halves = (window * window + ATTN_SM90W2_QUERIES - 1) / ATTN_SM90W2_QUERIES;
            launch(ATTN_SM90W2, halves, heads, (int) gridZ, ATTN_SM90W2_THREADS, ATTN_SM90W2_SMEM, stream, params, op);
            return;
        }
        if (wgmma) {
            Pointer globalParams = Pointer.to(ptr(qkv), ptr(relH), ptr(relW), ptr(out), Pointer.to(new int[] {h}),
                    Pointer.to(new int[] {w}), Pointer.to(new int[] {heads}), Pointer.to(new float[] {scale}));
            launch(ATTN_SM90, (h * w + ATTN_SM90_QUERIES - 1) / ATTN_SM90_QUERIES, heads, batch, ATTN_SM90_THREADS,
                    ATTN_SM90_SMEM, stream, globalParams, op);
            return;
        }
        boolean oneRow = seqW > ATTN_BKV / 2;
        int warps = oneRow ? ATTN_WARPS_ROW : ATTN_WARPS_ROWS;
        int smem = attentionSmem(headDim, warps, seqH, seqW);
        int queriesPerCta = 16 * warps;
        launch(attentionSymbol(headDim, oneRow), (seqH * seqW + queriesPerCta - 1) / queriesPerCta, heads, (int) gridZ,
                32 * warps, smem, stream, params, op);
    }

    // ------------------------------------------------------------------------------------------------
    // Image encoder data movement (encoder_ops.cuh)
    // ------------------------------------------------------------------------------------------------

    /**
     * Patch embedding rows: fp32 image {@code [batch, 3, s, s]} to bf16 {@code [batch * e * e, 3 * p * p]},
     * e = s / p, columns ordered (channel, dy, dx) like the flattened Conv2d weight.
     */
    public void patchify(CudaStream stream, DeviceBuffer image, DeviceBuffer rows, int batch, int s, int p) {
        String op = String.format(Locale.ROOT, "patchify batch=%d size=%d patch=%d", batch, s, p);
        require(batch > 0 && s > 0 && p > 0, op + ": dimensions must be positive");
        require(p % 8 == 0 && s % p == 0, op + ": patch must be a multiple of 8 and divide the image size");
        long pixels = (long) batch * 3 * s * s;
        requireBytes(image, pixels * 4, op, "image (fp32)");
        requireBf16(rows, pixels, op, "rows");
        long threads = pixels / 8;
        Pointer params = Pointer.to(ptr(image), ptr(rows), Pointer.to(new int[] {batch}), Pointer.to(new int[] {s}),
                Pointer.to(new int[] {p}));
        launch(PATCHIFY, gridFor(threads), 1, 1, ELEMENTWISE_THREADS, 0, stream, params, op);
    }

    /** {@code x[i] += add[i % period]} over {@code total} bf16 values (fp32 sum, one rounding). */
    public void addPeriodic(CudaStream stream, DeviceBuffer x, DeviceBuffer add, long total, long period) {
        String op = String.format(Locale.ROOT, "addPeriodic total=%d period=%d", total, period);
        require(total > 0 && period > 0, op + ": sizes must be positive");
        require(total % 8 == 0 && period % 8 == 0, op + ": total and period must be multiples of 8");
        requireBf16(x, total, op, "x");
        requireBf16(add, period, op, "add");
        Pointer params = Pointer.to(ptr(x), ptr(add), Pointer.to(new long[] {total}), Pointer.to(new long[] {period}));
        launch(ADD_PERIODIC, gridFor(total / 8), 1, 1, ELEMENTWISE_THREADS, 0, stream, params, op);
    }

    /**
     * Rows of a 3x3, stride 1, padding 1 convolution: channels-last {@code x [batch, h, w, c]} to
     * {@code [batch * h * w, 9 * c]}, columns ordered (ky, kx, channel) (the weight must be laid out
     * {@code [out, 3, 3, c]} to match); taps outside the image are zeros.
     */
    public void im2col3x3(CudaStream stream, DeviceBuffer x, DeviceBuffer rows, int batch, int h, int w, int c) {
        String op = String.format(Locale.ROOT, "im2col3x3 batch=%d grid=%dx%d c=%d", batch, h, w, c);
        require(batch > 0 && h > 0 && w > 0 && c > 0, op + ": dimensions must be positive");
        require(c % 8 == 0, op + ": c must be a multiple of 8");
        long pixels = (long) batch * h * w;
        requireBf16(x, pixels * c, op, "x");
        requireBf16(rows, pixels * 9 * c, op, "rows");
        Pointer params = Pointer.to(ptr(x), ptr(rows), Pointer.to(new int[] {batch}), Pointer.to(new int[] {h}),
                Pointer.to(new int[] {w}), Pointer.to(new int[] {c}));
        launch(IM2COL3X3, gridFor(pixels * 9 * c / 8), 1, 1, ELEMENTWISE_THREADS, 0, stream, params, op);
    }

    /** bf16 tokens {@code [batch, t, c]} to fp32 channels-first {@code [batch, c, t]}. */
    public void tokensToChw(CudaStream stream, DeviceBuffer tokens, DeviceBuffer out, int batch, int t, int c) {
        String op = String.format(Locale.ROOT, "tokensToChw batch=%d t=%d c=%d", batch, t, c);
        require(batch > 0 && t > 0 && c > 0, op + ": dimensions must be positive");
        require(batch <= 65535 && (c + 31) / 32 <= 65535, op + ": too large for one launch");
        long n = (long) batch * t * c;
        requireBf16(tokens, n, op, "tokens");
        requireBytes(out, n * 4, op, "out (fp32)");
        Pointer params = Pointer.to(ptr(tokens), ptr(out), Pointer.to(new int[] {t}), Pointer.to(new int[] {c}));
        launch2d(TOKENS_TO_CHW, (t + 31) / 32, (c + 31) / 32, batch, stream, params, op);
    }

    /** Grid-stride kernels: enough CTAs for a few waves, never more than the work needs. */
    private int gridFor(long threads) {
        long ctas = (threads + ELEMENTWISE_THREADS - 1) / ELEMENTWISE_THREADS;
        long cap = (long) context.info().multiprocessors() * 16;
        return (int) Math.max(1, Math.min(ctas, cap));
    }

    private void launch2d(String name, int gx, int gy, int gz, CudaStream stream, Pointer params, String op) {
        if (closed) {
            throw new IllegalStateException("CUDA kernels are closed");
        }
        Kernel k = kernels.get(name);
        context.bind();
        Cuda.check(cuLaunchKernel(k.function, gx, gy, gz, 32, 8, 1, 0, stream.stream, params, null),
                () -> "launching " + name + " for " + op);
    }

    private static void requireBytes(DeviceBuffer b, long bytes, String op, String name) {
        if (b == null) {
            throw new IllegalArgumentException(op + ": " + name + " is required");
        }
        if (b.bytes() < bytes) {
            throw new IllegalArgumentException(op + ": " + name + " needs " + bytes + " B, " + b + " holds " + b.bytes());
        }
        if (b.offset() % 16 != 0) {
            throw new IllegalArgumentException(op + ": " + name + " must be 16-byte aligned (" + b + " at offset "
                    + b.offset() + ")");
        }
    }

    // ------------------------------------------------------------------------------------------------

    private void launch(String name, int gx, int gy, int gz, int threads, int smem, CudaStream stream, Pointer params,
                        String op) {
        if (closed) {
            throw new IllegalStateException("CUDA kernels are closed");
        }
        Kernel k = kernels.get(name);
        if (smem > k.maxDynamicSmem) {
            throw new CudaException(op + ": needs " + smem + " B of shared memory per CTA, " + context.info().name()
                    + " allows " + k.maxDynamicSmem);
        }
        context.bind();
        Cuda.check(cuLaunchKernel(k.function, gx, gy, gz, threads, 1, 1, smem, stream.stream, params, null),
                () -> "launching " + name + " for " + op);
    }

    /**
     * Looks up one more kernel of the fatbin by name (no dynamic shared memory): the mask decoder's
     * ({@link DecoderKernels}) are added when a decoder is made. Call before any launch of it, and not while
     * other threads launch kernels of this object (the table is read without a lock).
     */
    synchronized void addKernel(String name) {
        if (!kernels.containsKey(name)) {
            add(name, 0);
        }
    }

    /** Launches a kernel added with {@link #addKernel} with a 1-, 2- or 3-d block and no dynamic shared memory. */
    void launchKernel(String name, int gx, int gy, int gz, int bx, int by, CudaStream stream, Pointer params,
                      String op) {
        if (closed) {
            throw new IllegalStateException("CUDA kernels are closed");
        }
        Kernel k = kernels.get(name);
        if (k == null) {
            throw new IllegalStateException("kernel " + name + " was not looked up (addKernel)");
        }
        context.bind();
        Cuda.check(cuLaunchKernel(k.function, gx, gy, gz, bx, by, 1, 0, stream.stream, params, null),
                () -> "launching " + name + " for " + op);
    }

    private static Pointer ptr(DeviceBuffer b) {
        return Pointer.to(b == null ? new CUdeviceptr() : b.pointer());
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    private static void requireBf16(DeviceBuffer b, long elements, String op, String name) {
        if (b == null) {
            throw new IllegalArgumentException(op + ": " + name + " is required");
        }
        if (b.bf16Capacity() < elements) {
            throw new IllegalArgumentException(op + ": " + name + " needs " + elements + " bf16 values, " + b + " holds "
                    + b.bf16Capacity());
        }
        if (b.offset() % 16 != 0) {
            throw new IllegalArgumentException(op + ": " + name + " must be 16-byte aligned (" + b + " at offset "
                    + b.offset() + ")");
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            context.bind();
            Cuda.check(cuModuleUnload(module), "unloading the CUDA kernels");
        }
    }
}
