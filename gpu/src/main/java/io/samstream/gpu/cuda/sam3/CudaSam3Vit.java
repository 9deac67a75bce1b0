package io.samstream.gpu.cuda.sam3;

import io.samstream.config.ModelPrecision;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.DeviceWeights.Bf16;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.StagedCopy;
import io.samstream.gpu.cuda.kernels.EncoderOpsKernels;
import io.samstream.gpu.cuda.kernels.Fp8GemmKernels;
import io.samstream.gpu.cuda.kernels.Fp8GemmKernels.Fp8Weight;
import io.samstream.gpu.cuda.kernels.Fp8WeightUpload;
import io.samstream.gpu.cuda.kernels.GemmKernels;
import io.samstream.gpu.cuda.kernels.NormKernels;
import io.samstream.gpu.cuda.kernels.Sam2Kernels;
import io.samstream.gpu.cuda.kernels.Sam2Kernels.Rows;
import io.samstream.gpu.sam2.RotaryEncoding;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3Trunk;
import io.samstream.gpu.sam3.VitPositionEmbedding;
import java.util.ArrayList;
import java.util.List;

/**
 * SAM 3's image trunk ({@code vitdet.ViT}) on the GPU in bf16 with fp32 accumulation, read the way the CPU reference
 * ({@code sam3.Vit}, {@code sam3.VitBlock}) reads, on kernels proven by SAM and SAM 2. Tokens are channels-last rows:
 * <ol>
 *   <li>patch embedding: the fp32 planar image unfolded into 14x14 stride-14 rows (SAM 2's unfold), one GEMM without
 *       bias, + the tiled position embedding ({@link VitPositionEmbedding}), then {@code ln_pre} in place;</li>
 *   <li>each block: norm1 → windows (zero-padded; a global block is one window of the whole map) → qkv GEMM →
 *       2-D RoPE on q and k in place (SAM 2's memory-attention RoPE kernel; windowed blocks' angles per window
 *       position, global blocks' scaled to the window size, tables from the CPU's {@code RotaryEncoding}) → SDPA →
 *       proj GEMM → unpartition added to x; then {@code x = x + fc2(GELU(fc1(norm2(x))))}, the residual fused.</li>
 * </ol>
 * An MLP width that is not a multiple of 8 (16 with FP8; the tiny test model's 222) is zero-padded ({@link
 * #mlpColumns}): fc1's extra rows and bias are 0, GELU(0) = 0, and fc2's extra columns are 0, so the result is
 * unchanged. The weights and the activations of {@code maxBatch} images come from the pool; a pass allocates nothing.
 * Not thread-safe.
 *
 * <p><b>FP8</b> ({@link ModelPrecision#FP8}, Hopper only; {@code samstream.model.precision}): each block's four Linears
 * run on the e4m3 tensor cores ({@link Fp8GemmKernels}), weights quantized once at load with one scale per output
 * channel, as the SAM encoder's FP8 path does. qkv and proj read their input quantized per row after the window
 * partition and the attention (a row pass each: the windows are a permutation of the normalized rows, padded with
 * zeros); norm2 writes e4m3 and row scales itself; fc1's epilogue writes e4m3 with one scale per (row, 128 columns)
 * and fc2 applies them per k block, when the MLP width is a multiple of 128 (the release's 4736), else fc1 writes bf16
 * and a row pass quantizes it. The residual stream, RoPE, attention and the patch embedding stay bf16.
 */
public final class CudaSam3Vit implements Sam3Trunk {
    private static final float EPS = (float) Sam3Config.NORM_EPS;
    /** The widest row FP8's fused LayerNorm + quantize kernel takes (the release's 1024 fits). */
    static final int FP8_MAX_WIDTH = 1280;

    /** A block Linear: its bf16 weight, or with FP8 its e4m3 form (the other null), and its bf16 bias. */
    private record Linear(DeviceBuffer w, Fp8Weight fp8, DeviceBuffer b) {}

    private record Block(Bf16 norm1, Linear qkv, Linear proj, Bf16 norm2, Linear fc1, Linear fc2, boolean global) {}

    private final Sam3Config.Vision v;
    private final CudaStream stream;
    private final PinnedBuffer staging;
    private final GemmKernels gemm;
    private final NormKernels norm;
    private final Sam2Kernels ops;
    private final EncoderOpsKernels encoderOps;
    private final Fp8GemmKernels fp8Gemm;
    /** The blocks' Linears on the e4m3 tensor cores. Decided once, here; the weights and buffers follow from it. */
    private final boolean fp8;
    /** FP8 with an MLP width that is a multiple of 128: fc1 writes e4m3 with block scales for fc2. */
    private final boolean fp8BlockScaledMlp;
    private final DeviceMemoryPool pool;
    private final int grid, e, heads, hd, ws, mlpCols, patchCols;

    private final DeviceBuffer patchW, posEmbed;
    private final Bf16 lnPre;
    private final Block[] blocks;
    /** RoPE angles (fp32 [side², hd/2]) of the windowed blocks (side = window) and of the global ones (the map). */
    private final DeviceBuffer windowCos, windowSin, globalCos, globalSin;
    // activations (largest batch)
    private final DeviceBuffer image, x, xn, windows, qkv, attn, wide;
    /** FP8 only (else null): a Linear's e4m3 input {@code [rows, max(e, mlp)]}, its row scales, fc2's block scales. */
    private final DeviceBuffer q8, q8Scales, q8BlockScales;

    /**
     * Uploads the trunk's weights (bf16, the block Linears' e4m3 with FP8; through {@code staging}, synchronously) and allocates the activations of
     * {@code maxBatch} images, all from {@code pool}.
     *
     * @param sd        the detector's weights under Meta's key names ({@code backbone.vision_backbone.trunk.*})
     * @param precision the blocks' Linears in bf16 or FP8 (FP8 needs the e4m3 GEMM: compute capability 9.0)
     * @throws IllegalArgumentException when the kernels cannot run these shapes ({@link #checkSupported},
     *                                  {@link #checkPrecision}), or FP8 on a GPU without the e4m3 GEMM
     */
    public CudaSam3Vit(StateDict sd, Sam3Config.Vision vision, int maxBatch, ModelPrecision precision,
                       CudaKernels kernels, CudaStream stream, DeviceMemoryPool pool, PinnedBuffer staging) {
        checkSupported(vision, maxBatch);
        checkPrecision(vision, precision);
        this.v = vision;
        this.pool = pool;
        this.fp8Gemm = Fp8GemmKernels.of(kernels);
        this.fp8 = precision == ModelPrecision.FP8;
        if (fp8 && fp8Gemm.gemmUnavailable() != null) {
            throw new IllegalArgumentException("samstream.model.precision = fp8 (SAM 3's trunk): "
                    + fp8Gemm.gemmUnavailable());
        }
        this.stream = stream;
        this.staging = staging;
        this.gemm = GemmKernels.of(kernels);
        this.norm = NormKernels.of(kernels);
        this.ops = Sam2Kernels.of(kernels);
        this.encoderOps = EncoderOpsKernels.of(kernels);
        this.grid = vision.grid();
        this.e = vision.embedDim();
        this.heads = vision.heads();
        this.hd = vision.headDim();
        this.ws = vision.windowSize();
        this.mlpCols = mlpColumns(vision, precision);
        int p = vision.patchSize();
        this.patchCols = roundUp8(3 * p * p);
        this.fp8BlockScaledMlp = fp8 && mlpCols % Fp8GemmKernels.SCALE_BLOCK == 0;

        DeviceWeights up = new DeviceWeights(pool, stream, staging);
        String pre = VitPositionEmbedding.TRUNK_PREFIX;
        patchW = up.bf16(padColumns(sd.get(pre + "patch_embed.proj.weight", e, 3, p, p).data(), e, 3 * p * p,
                patchCols), pre + "patch_embed.proj.weight");
        posEmbed = up.bf16(VitPositionEmbedding.tiled(sd, vision), pre + "pos_embed (tiled)");
        lnPre = up.normBf16(sd, pre + "ln_pre", e);
        blocks = new Block[vision.depth()];
        for (int i = 0; i < blocks.length; i++) {
            blocks[i] = load(up, sd, pre + "blocks." + i + ".", vision.isGlobal(i));
        }
        RotaryEncoding windowRope = new RotaryEncoding(hd, ws, Sam3Config.ROPE_THETA, 1.0);
        RotaryEncoding globalRope = new RotaryEncoding(hd, grid, Sam3Config.ROPE_THETA, (double) ws / grid);
        windowCos = up.f32(windowRope.cosTable(), "rope cos (window)");
        windowSin = up.f32(windowRope.sinTable(), "rope sin (window)");
        globalCos = up.f32(globalRope.cosTable(), "rope cos (global)");
        globalSin = up.f32(globalRope.sinTable(), "rope sin (global)");

        int s = vision.imageSize();
        long m = (long) maxBatch * grid * grid;
        long padded = (long) maxBatch * paddedTokens(vision);
        image = pool.allocate((long) maxBatch * 3 * s * s * 4, "sam3 vit input (fp32)");
        x = pool.allocateBf16(m * e, "sam3 vit tokens x");
        xn = pool.allocateBf16(m * e, "sam3 vit normalized tokens");
        windows = pool.allocateBf16(padded * e, "sam3 vit windows / projection");
        qkv = pool.allocateBf16(padded * 3 * e, "sam3 vit qkv");
        attn = pool.allocateBf16(padded * e, "sam3 vit attention output");
        wide = pool.allocateBf16(m * Math.max(mlpCols, patchCols), "sam3 vit wide (patch rows, mlp hidden)");
        q8 = fp8 ? pool.allocate(padded * Math.max(e, mlpCols), "sam3 vit e4m3 activations") : null;
        q8Scales = fp8 ? pool.allocate(padded * 4, "sam3 vit e4m3 row scales") : null;
        q8BlockScales = fp8BlockScaledMlp
                ? pool.allocate(m * (mlpCols / Fp8GemmKernels.SCALE_BLOCK) * 4, "sam3 vit e4m3 block scales") : null;
    }

    /** The fp32 planar images {@code [B, 3, S, S]} a pass reads (normalized as the model expects). */
    public DeviceBuffer input() {
        return image;
    }

    /** The bf16 channels-last map {@code [B, grid * grid, embed]} a pass leaves. */
    public DeviceBuffer output() {
        return x;
    }

    /** One image (normalized, planar {@code [3, S, S]}) through the trunk, its map brought back as fp32. Synchronous. */
    @Override
    public FeatureMap forward(float[] chw) {
        queue(chw);
        return FeatureMap.of(StagedCopy.downloadBf16(stream, staging, x, (long) grid * grid * e));
    }

    /** Uploads one image (normalized, planar {@code [3, S, S]}) and queues its pass to {@link #output}. */
    public void queue(float[] chw) {
        int s = v.imageSize();
        if (chw.length != 3 * s * s) {
            throw new IllegalArgumentException("model input of " + chw.length + " values; 3 x " + s + " x " + s
                    + " expected");
        }
        StagedCopy.uploadF32(stream, staging, chw, image);
        forward(1);
    }

    /** Queues one pass of {@code batch} images from {@link #input} to {@link #output}. */
    public void forward(int batch) {
        int s = v.imageSize();
        int m = batch * grid * grid;
        ops.unfold(stream, image, wide, batch, 3, s, s, v.patchSize(), v.patchSize(), 0, patchCols);
        gemm.run(stream, wide, patchW, null, null, x, m, e, patchCols, false);
        encoderOps.addPeriodic(stream, x, posEmbed, (long) m * e, (long) grid * grid * e);
        norm.layerNorm(stream, x, lnPre.w(), lnPre.b(), x, m, e, EPS);
        for (Block b : blocks) {
            block(b, batch, m);
        }
    }

    /** {@code x = x + attn(norm1(x))} (windowed or global), then {@code x = x + mlp(norm2(x))}. */
    private void block(Block b, int batch, int m) {
        norm.layerNorm(stream, x, b.norm1.w(), b.norm1.b(), xn, m, e, EPS);
        int side = b.global ? grid : ws;
        int per = Sam2Kernels.ceilDiv(grid, side);
        int nWin = batch * per * per;
        int tokens = side * side;
        int rows = nWin * tokens;
        ops.windowPartition(stream, xn, windows, batch, grid, grid, e, side);
        linear(windows, b.qkv, null, qkv, rows, 3 * e, e, false);
        int ld = 3 * e;
        long batchStride = (long) tokens * ld;
        DeviceBuffer k = qkv.slice((long) e * 2, qkv.bytes() - (long) e * 2, "sam3 vit k");
        DeviceBuffer val = qkv.slice((long) e * 4, qkv.bytes() - (long) e * 4, "sam3 vit v");
        DeviceBuffer cos = b.global ? globalCos : windowCos, sin = b.global ? globalSin : windowSin;
        ops.rope(stream, qkv, ld, rows, heads, hd, cos, sin, tokens);
        ops.rope(stream, k, ld, rows, heads, hd, cos, sin, tokens);
        ops.sdpa(stream, new Rows(qkv, ld, batchStride), new Rows(k, ld, batchStride), new Rows(val, ld, batchStride),
                new Rows(attn, e, (long) tokens * e), nWin, tokens, tokens, heads, hd, (float) (1.0 / Math.sqrt(hd)));
        // the windows are consumed: their buffer takes the projection
        linear(attn, b.proj, null, windows, rows, e, e, false);
        ops.windowUnpartitionAdd(stream, windows, x, batch, grid, grid, e, side, per, per);
        mlp(b, m);
    }

    /** {@code x = x + fc2(GELU(fc1(norm2(x))))}, the residual fused into fc2. */
    private void mlp(Block b, int m) {
        if (!fp8) {
            norm.layerNorm(stream, x, b.norm2.w(), b.norm2.b(), xn, m, e, EPS);
            gemm.run(stream, xn, b.fc1.w(), b.fc1.b(), null, wide, m, mlpCols, e, true);
            gemm.run(stream, wide, b.fc2.w(), b.fc2.b(), x, x, m, e, mlpCols, false);
            return;
        }
        fp8Gemm.layerNormQuantize(stream, x, b.norm2.w(), b.norm2.b(), q8, q8Scales, m, e, EPS);
        if (fp8BlockScaledMlp) {
            // fc1's epilogue quantizes (wide holds e4m3 bytes here), fc2 applies the block scales per k block
            fp8Gemm.runE4m3Out(stream, q8, q8Scales, b.fc1.fp8(), b.fc1.b(), wide, q8BlockScales, m, true,
                    fp8Gemm.defaultTile(m, mlpCols, e, true));
            fp8Gemm.runBlockScaled(stream, wide, q8BlockScales, b.fc2.fp8(), b.fc2.b(), x, x, m, false);
        } else {
            fp8Gemm.run(stream, q8, q8Scales, b.fc1.fp8(), b.fc1.b(), null, wide, m, true);
            linear(wide, b.fc2, x, x, m, e, mlpCols, false);
        }
    }

    /** {@code c = a · wᵀ + bias (+ residual)}: the bf16 GEMM, or with FP8 {@code a} quantized per row, then e4m3. */
    private void linear(DeviceBuffer a, Linear l, DeviceBuffer residual, DeviceBuffer c, int m, int n, int k,
                        boolean gelu) {
        if (l.fp8() != null) {
            fp8Gemm.quantize(stream, a, q8, q8Scales, m, k);
            fp8Gemm.run(stream, q8, q8Scales, l.fp8(), l.b(), residual, c, m, gelu);
        } else {
            gemm.run(stream, a, l.w(), l.b(), residual, c, m, n, k, gelu);
        }
    }

    /** The pool owns the device memory; nothing to free here. */
    @Override
    public void close() {}

    // ------------------------------------------------------------------------------------------------
    // Sizes, checks and weights
    // ------------------------------------------------------------------------------------------------

    /** Why the kernels cannot run this trunk at this batch, as an exception; nothing when they can. */
    public static void checkSupported(Sam3Config.Vision v, int maxBatch) {
        List<String> problems = new ArrayList<>();
        if (maxBatch < 1) {
            problems.add("max batch must be at least 1, got " + maxBatch);
        }
        if (v.imageSize() % v.patchSize() != 0) {
            problems.add("patch " + v.patchSize() + " does not divide the input " + v.imageSize());
        }
        if (v.embedDim() % 8 != 0 || v.embedDim() > 2048) {
            problems.add("width " + v.embedDim() + " (a multiple of 8 up to 2048)");
        }
        int hd = v.embedDim() / Math.max(1, v.heads());
        if (v.embedDim() % v.heads() != 0 || hd % 8 != 0 || Sam2Kernels.sdpaCeiling(hd) < 0) {
            problems.add("head width " + v.embedDim() + "/" + v.heads() + " (a multiple of 8 up to 256)");
        }
        if (v.windowSize() < 1) {
            problems.add("window " + v.windowSize());
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("the CUDA SAM 3 trunk cannot run " + v + ": "
                    + String.join("; ", problems));
        }
    }

    /**
     * The pool bytes of the trunk at batch 1 in {@code precision}: its weights (an upper bound: every trunk tensor, each
     * 256-byte aligned, the MLP's and the patch rows' padding included; with FP8 the blocks' Linears as e4m3 bytes +
     * one fp32 scale per output channel) plus one image's activations (with FP8 also the e4m3 rows and their scales).
     */
    public static long poolBytes(Sam3Config.Vision v, ModelPrecision precision) {
        boolean fp8 = precision == ModelPrecision.FP8;
        long e = v.embedDim(), grid = v.grid(), mlp = mlpColumns(v, precision);
        long patchCols = roundUp8(3 * v.patchSize() * v.patchSize());
        long perBlock = 4 * align(e * 2) + linearBytes(3 * e, e, fp8) + align(3 * e * 2) + linearBytes(e, e, fp8)
                + align(e * 2) + linearBytes(mlp, e, fp8) + align(mlp * 2) + linearBytes(e, mlp, fp8) + align(e * 2);
        long weights = v.depth() * perBlock + align(e * patchCols * 2) + align(grid * grid * e * 2) + 2 * align(e * 2)
                + 4 * align(grid * grid * v.headDim() / 2 * 4);
        long padded = paddedTokens(v);
        long activations = align(3L * v.imageSize() * v.imageSize() * 4) + 2 * align(grid * grid * e * 2)
                + 2 * align(padded * e * 2) + align(padded * 3 * e * 2)
                + align(grid * grid * Math.max(mlp, patchCols) * 2);
        if (fp8) {
            activations += align(padded * Math.max(e, mlp)) + align(padded * 4)
                    + (mlp % Fp8GemmKernels.SCALE_BLOCK == 0 ? align(grid * grid * (mlp / Fp8GemmKernels.SCALE_BLOCK) * 4)
                    : 0);
        }
        return weights + activations;
    }

    /** A block Linear's weight {@code [out, in]}: bf16, or e4m3 bytes + one fp32 scale per output channel. */
    private static long linearBytes(long out, long in, boolean fp8) {
        return fp8 ? align(out * in) + align(out * 4) : align(out * in * 2);
    }

    private static long align(long bytes) {
        return BumpAllocator.alignUp(Math.max(bytes, 1));
    }

    /** Why the FP8 kernels cannot run this trunk's widths, as an exception; nothing in bf16 or when they can. */
    public static void checkPrecision(Sam3Config.Vision v, ModelPrecision precision) {
        if (precision == ModelPrecision.FP8 && (v.embedDim() % 16 != 0 || v.embedDim() > FP8_MAX_WIDTH)) {
            throw new IllegalArgumentException("samstream.model.precision = fp8: SAM 3's trunk of width "
                    + v.embedDim() + " (fp8 needs a multiple of 16 up to " + FP8_MAX_WIDTH + ")");
        }
    }

    /** Tokens of one image's windows, padding included (the most any block's attention sees). */
    private static long paddedTokens(Sam3Config.Vision v) {
        int per = Sam2Kernels.ceilDiv(v.grid(), v.windowSize());
        return Math.max((long) v.grid() * v.grid(), (long) per * per * v.windowSize() * v.windowSize());
    }

    private Block load(DeviceWeights up, StateDict sd, String p, boolean global) {
        int hidden = v.mlpHidden();
        Linear fc1 = loadLinear(up, padRows(sd.get(p + "mlp.fc1.weight", hidden, e).data(), hidden, e, mlpCols),
                mlpCols, e, up.bf16(padRows(sd.get(p + "mlp.fc1.bias", hidden).data(), hidden, 1, mlpCols),
                        p + "mlp.fc1.bias"), p + "mlp.fc1.weight");
        Linear fc2 = loadLinear(up, padColumns(sd.get(p + "mlp.fc2.weight", e, hidden).data(), e, hidden, mlpCols), e,
                mlpCols, up.bf16(sd.get(p + "mlp.fc2.bias", e).data(), p + "mlp.fc2.bias"), p + "mlp.fc2.weight");
        return new Block(up.normBf16(sd, p + "norm1", e), loadLinear(up, sd, p + "attn.qkv", 3 * e, e),
                loadLinear(up, sd, p + "attn.proj", e, e), up.normBf16(sd, p + "norm2", e), fc1, fc2, global);
    }

    /** A checkpoint Linear {@code [out, in]} and its bias in this trunk's precision. */
    private Linear loadLinear(DeviceWeights up, StateDict sd, String name, int out, int in) {
        return loadLinear(up, sd.get(name + ".weight", out, in).data(), out, in,
                up.bf16(sd.get(name + ".bias", out).data(), name + ".bias"), name + ".weight");
    }

    /** Weight values {@code [out, in]}: bf16, or with FP8 e4m3 with one scale per output channel (quantized here). */
    private Linear loadLinear(DeviceWeights up, float[] w, int out, int in, DeviceBuffer bias, String what) {
        return fp8 ? new Linear(null, Fp8WeightUpload.upload(w, out, in, pool, stream, staging, what), bias)
                : new Linear(up.bf16(w, what), null, bias);
    }

    /**
     * The MLP's width as the kernels hold it: the hidden width zero-padded to a multiple of 8 (the bf16 GEMM's rows),
     * or of 16 with FP8 (fc2's e4m3 rows of k are whole 16-byte units).
     */
    static int mlpColumns(Sam3Config.Vision v, ModelPrecision precision) {
        int align = precision == ModelPrecision.FP8 ? 16 : 8;
        return (v.mlpHidden() + align - 1) / align * align;
    }

    static int roundUp8(int n) {
        return (n + 7) / 8 * 8;
    }

    /** A {@code [rows, cols]} matrix with its rows zero-padded to {@code width} columns. */
    static float[] padColumns(float[] w, int rows, int cols, int width) {
        float[] out = new float[rows * width];
        for (int r = 0; r < rows; r++) {
            System.arraycopy(w, r * cols, out, r * width, cols);
        }
        return out;
    }

    /** A {@code [rows, cols]} matrix with zero rows appended up to {@code toRows}. */
    static float[] padRows(float[] w, int rows, int cols, int toRows) {
        float[] out = new float[toRows * cols];
        System.arraycopy(w, 0, out, 0, rows * cols);
        return out;
    }
}
