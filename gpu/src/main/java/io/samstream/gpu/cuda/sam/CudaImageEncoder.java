package io.samstream.gpu.cuda.sam;

import static io.samstream.gpu.cuda.StepMarks.mark;
import static io.samstream.gpu.cuda.kernels.WeightLayouts.conv3x3ChannelsLast;

import java.util.ArrayList;
import java.util.List;

import io.samstream.config.ModelPrecision;
import io.samstream.config.ModelSparsity;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.StepMarks;
import io.samstream.gpu.cuda.kernels.AttentionKernels;
import io.samstream.gpu.cuda.kernels.EncoderOpsKernels;
import io.samstream.gpu.cuda.kernels.Fp8GemmKernels;
import io.samstream.gpu.cuda.kernels.Fp8GemmKernels.Fp8Weight;
import io.samstream.gpu.cuda.kernels.Fp8WeightUpload;
import io.samstream.gpu.cuda.kernels.GemmKernels;
import io.samstream.gpu.cuda.kernels.NormKernels;
import io.samstream.gpu.cuda.kernels.SparseGemmKernels.SparseWeight;
import io.samstream.gpu.cuda.kernels.SparseGemmKernels;
import io.samstream.gpu.cuda.kernels.SparseWeightUpload;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.sparse.SparseEncoder;
import io.samstream.gpu.sparse.TwoFourWeights;
import io.samstream.gpu.tensor.Tensor;

/**
 * SAM's image encoder (Meta's {@code ImageEncoderViT}) on the GPU in bf16 with fp32 accumulation: its weights in a
 * device pool and the forward pass queued on a stream, read the way image_encoder.py reads. Activations are
 * channels-last tokens {@code [B * E * E, C]} throughout:
 * <ol>
 *   <li>patch embedding: fp32 image → patch rows by index mapping ({@code patchify}) → one GEMM with the conv bias →
 *       + absolute position embedding;</li>
 *   <li>each block: {@code x = x + proj(attention(qkv(norm1(x))))} (flash attention with the decomposed relative
 *       position bias; windowed blocks partition / pad / unpartition by index mapping inside the kernel), then
 *       {@code x = x + lin2(GELU(lin1(norm2(x))))}, the residual adds fused into the GEMMs' epilogues;</li>
 *   <li>neck: 1x1 conv as a GEMM → LayerNorm2d (a row LayerNorm over the channels of each pixel) → 3x3 conv as rows
 *       ({@code im2col3x3}, weight re-laid out {@code [O, 3, 3, C]}) + GEMM → LayerNorm2d: bf16 channels-last
 *       embeddings ({@link #output}).</li>
 * </ol>
 * The residual stream is kept in bf16, as in Meta's bf16 model. A 2:4-pruned Linear runs on the sparse tensor cores.
 *
 * <p><b>FP8</b> ({@link ModelPrecision#FP8}, Hopper only): the blocks' four Linears run on the e4m3 tensor cores
 * ({@link Fp8GemmKernels}) with weights quantized at load (one scale per output channel). Their inputs are quantized per
 * token into {@code q8} + {@code q8Scales}: by the LayerNorm itself before qkv and lin1 (norm1 / norm2 then write no
 * bf16 {@code h}) and by a row kernel from the attention output (before proj); lin1's GELU epilogue writes e4m3 with
 * one scale per (token, 128 columns) into {@code wideBuf} + {@code q8BlockScales}, which lin2 applies per k block,
 * promoting its partial sums to fp32 every 128 of k (an mlp width that is no multiple of 128: lin1 writes bf16 and a
 * row kernel quantizes it). The residual stream, attention, the patch embedding and the neck stay bf16.
 *
 * <p><b>Memory.</b> The weights and the activations of the largest batch come from the pool it is given (sized with
 * {@link #weightBytes} + {@link #activationBytes}); a forward pass allocates nothing and never waits on the host.
 * Buffers are reused across blocks: {@code x} (the residual stream), {@code h} (normalized tokens, then the attention
 * output), and one "wide" buffer holding in turn the patch rows, the qkv output, the MLP hidden layer and the 3x3-conv
 * rows. Not thread-safe: the backend serializes its passes.
 */
final class CudaImageEncoder {
    private static final float ENCODER_EPS = 1e-6f, NECK_EPS = 1e-6f;

    /** A Linear: its bf16 weight, its 2:4 form when pruned, or its e4m3 form with FP8 (the others null), and its bias. */
    private record Linear(DeviceBuffer w, SparseWeight sparse, Fp8Weight fp8, DeviceBuffer b) {}

    /** One encoder block's weights (Meta's {@code Block}: norm1, attn, norm2, mlp). */
    private record Block(DeviceBuffer norm1G, DeviceBuffer norm1B, Linear qkv, Linear proj, DeviceBuffer relH,
                         DeviceBuffer relW, DeviceBuffer norm2G, DeviceBuffer norm2B, Linear lin1, Linear lin2,
                         int window) {}

    private final int s, p, e, tokens, d, heads, headDim, mlp, neckC, window;
    private final CudaStream stream;
    private final DeviceMemoryPool pool;
    private final PinnedBuffer staging;
    private final GemmKernels gemm;
    private final SparseGemmKernels sparseGemm;
    private final Fp8GemmKernels fp8Gemm;
    private final NormKernels norm;
    private final AttentionKernels attention;
    private final EncoderOpsKernels ops;
    /** Encoder weight sparsity: which block Linears run on the sparse tensor cores. */
    private final ModelSparsity sparsity;
    /** FP8: the block Linears on the e4m3 tensor cores. Decided once, here; the weights and buffers follow from it. */
    private final boolean fp8;

    // weights
    private final DeviceBuffer patchW, patchB, posEmbed;
    private final Block[] blocks;
    private final DeviceBuffer neck0W, neck1G, neck1B, neck2W, neck3G, neck3B;
    // activations (largest batch)
    private final DeviceBuffer image, x, h, wideBuf, neckA, neckB, out;
    /** FP8 only (else null): the next Linear's e4m3 input {@code [m, max(d, mlp)]} and its per-row scales {@code [m]}. */
    private final DeviceBuffer q8, q8Scales;
    /**
     * FP8 with an mlp width that is a multiple of 128 (every release): mlp.lin1 writes e4m3 with one scale per (row,
     * 128 columns) into wideBuf + q8BlockScales, read by the block-scaled lin2 with no quantize pass between; it
     * measured faster and closer to the exact product than lin1 bf16 -> quantize per row -> lin2
     * (bench/results/2026-12-05-h100-fp8-blockscale.md). Other widths take that per-row path. Null unless used.
     */
    private final DeviceBuffer q8BlockScales;
    private final boolean fp8BlockScaledMlp;

    /**
     * Uploads the encoder's weights (bf16, through {@code staging}, synchronously) and allocates the activations of
     * {@code maxBatch} images, all from {@code pool}.
     *
     * @param weights   the checkpoint's tensors under Meta's key names; the Linears {@code sparsity} names pruned
     * @param precision the blocks' Linears in bf16 or FP8 (not with 2:4 sparsity; FP8 needs compute capability 9.0)
     * @param staging   pinned memory for the uploads, at least 16 MiB
     * @throws IllegalArgumentException FP8 asked with 2:4 sparsity, or on a GPU that cannot run the FP8 GEMM
     */
    CudaImageEncoder(StateDict weights, SamConfig config, int maxBatch, ModelSparsity sparsity, ModelPrecision precision,
                     CudaKernels kernels, CudaStream stream, DeviceMemoryPool pool, PinnedBuffer staging) {
        this.s = config.imageSize();
        this.p = config.patchSize();
        this.e = config.embeddingSize();
        this.tokens = e * e;
        this.d = config.encoderDim();
        this.heads = config.encoderHeads();
        this.headDim = config.encoderHeadDim();
        this.mlp = config.encoderMlpDim();
        this.neckC = config.promptDim();
        this.window = config.windowSize();
        this.sparsity = sparsity;
        this.fp8 = precision == ModelPrecision.FP8;
        this.stream = stream;
        this.pool = pool;
        this.staging = staging;
        this.gemm = GemmKernels.of(kernels);
        this.sparseGemm = SparseGemmKernels.of(kernels);
        this.fp8Gemm = Fp8GemmKernels.of(kernels);
        if (fp8 && sparsity.twoFour()) {
            throw new IllegalArgumentException("samstream.model.precision = fp8 cannot be combined with 2:4 sparsity yet"
                    + " (no sparse FP8 kernel)");
        }
        if (fp8 && fp8Gemm.gemmUnavailable() != null) {
            throw new IllegalArgumentException("samstream.model.precision = fp8: " + fp8Gemm.gemmUnavailable()
                    + " (use bf16 on this GPU)");
        }
        this.norm = NormKernels.of(kernels);
        this.attention = AttentionKernels.of(kernels);
        this.ops = EncoderOpsKernels.of(kernels);

        String enc = "image_encoder.";
        patchW = upload(weights.get(enc + "patch_embed.proj.weight", d, 3, p, p).data(), "patch_embed.proj.weight");
        patchB = upload(weights.get(enc + "patch_embed.proj.bias", d).data(), "patch_embed.proj.bias");
        posEmbed = upload(weights.get(enc + "pos_embed", 1, e, e, d).data(), "pos_embed");
        blocks = new Block[config.encoderDepth()];
        for (int i = 0; i < blocks.length; i++) {
            blocks[i] = loadBlock(weights, enc + "blocks." + i + ".", config.isGlobalAttention(i) ? 0 : window);
        }
        neck0W = upload(weights.get(enc + "neck.0.weight", neckC, d, 1, 1).data(), "neck.0.weight");
        neck1G = upload(weights.get(enc + "neck.1.weight", neckC).data(), "neck.1.weight");
        neck1B = upload(weights.get(enc + "neck.1.bias", neckC).data(), "neck.1.bias");
        neck2W = upload(conv3x3ChannelsLast(weights.get(enc + "neck.2.weight", neckC, neckC, 3, 3).data(), neckC,
                neckC), "neck.2.weight");
        neck3G = upload(weights.get(enc + "neck.3.weight", neckC).data(), "neck.3.weight");
        neck3B = upload(weights.get(enc + "neck.3.bias", neckC).data(), "neck.3.bias");

        long m = (long) maxBatch * tokens;
        int wide = wideColumns(config);
        image = pool.allocate(inputBytes(config, maxBatch), "encoder input image (fp32)");
        x = pool.allocateBf16(m * d, "tokens x");
        h = pool.allocateBf16(m * d, "tokens h");
        wideBuf = pool.allocateBf16(m * wide, "wide activations");
        neckA = pool.allocateBf16(m * neckC, "neck a");
        neckB = pool.allocateBf16(m * neckC, "neck b");
        out = pool.allocate(outputBytes(config, maxBatch), "embeddings (fp32)");
        q8 = fp8 ? pool.allocate(m * Math.max(d, mlp), "e4m3 activations") : null;
        q8Scales = fp8 ? pool.allocate(m * 4, "e4m3 activation scales") : null;
        fp8BlockScaledMlp = fp8 && mlp % Fp8GemmKernels.SCALE_BLOCK == 0;
        q8BlockScales = fp8BlockScaledMlp
                ? pool.allocate(m * (mlp / Fp8GemmKernels.SCALE_BLOCK) * 4, "e4m3 block scales") : null;
    }

    /** The fp32 input images {@code [B, 3, S, S]} a pass reads. */
    DeviceBuffer input() {
        return image;
    }

    /** The bf16 channels-last embeddings {@code [B, E * E, C]} a pass leaves. */
    DeviceBuffer output() {
        return neckB;
    }

    /** Queues the layout change of a pass's {@code batch} embeddings to fp32 channels-first {@code [B, C, E, E]}. */
    DeviceBuffer channelsFirst(int batch) {
        ops.tokensToChw(stream, neckB, out, batch, tokens, neckC);
        return out;
    }

    // ------------------------------------------------------------------------------------------------
    // The forward pass (image_encoder.py)
    // ------------------------------------------------------------------------------------------------

    /** Queues one forward pass of {@code batch} images from {@link #input} to {@link #output}; marks may be null. */
    void forward(int batch, StepMarks marks) {
        int m = batch * tokens;
        patchEmbed(batch, m);
        mark(marks, "patch_embed");
        for (Block b : blocks) {
            block(b, batch, m, marks);
        }
        neck(batch, m);
        mark(marks, "neck");
    }

    /** Conv2d(3, C, P, stride P) as patch rows and one GEMM, then + pos_embed. */
    private void patchEmbed(int batch, int m) {
        ops.patchify(stream, image, wideBuf, batch, s, p);
        gemm.run(stream, wideBuf, patchW, patchB, null, x, m, d, 3 * p * p, false);
        ops.addPeriodic(stream, x, posEmbed, (long) m * d, (long) tokens * d);
    }

    /** {@code x = x + attn(norm1(x))}, then {@code x = x + mlp(norm2(x))}. */
    private void block(Block b, int batch, int m, StepMarks marks) {
        normalize(b.norm1G, b.norm1B, m);
        mark(marks, "layernorm");
        attention(b, batch, m, marks);
        normalize(b.norm2G, b.norm2B, m);
        mark(marks, "layernorm");
        mlp(b, m, marks);
    }

    /** LayerNorm of x into the next Linear's input: h (bf16), or with FP8 q8 + its scales (fused). */
    private void normalize(DeviceBuffer gamma, DeviceBuffer beta, int m) {
        if (fp8) {
            fp8Gemm.layerNormQuantize(stream, x, gamma, beta, q8, q8Scales, m, d, ENCODER_EPS);
        } else {
            norm.layerNorm(stream, x, gamma, beta, h, m, d, ENCODER_EPS);
        }
    }

    /**
     * Meta's {@code Attention} with the residual: qkv Linear of h → attention (windowed or global) into h → proj Linear
     * added to x in place.
     */
    private void attention(Block b, int batch, int m, StepMarks marks) {
        linear(h, true, b.qkv, null, wideBuf, m, 3 * d, d, false);
        mark(marks, "qkv");
        attention.run(stream, wideBuf, b.window > 0 ? b.qkv.b : null, b.relH, b.relW, h, batch, e, e, heads, headDim,
                b.window);
        mark(marks, b.window > 0 ? "attention windowed" : "attention global");
        linear(h, false, b.proj, x, x, m, d, d, false);
        mark(marks, "proj");
    }

    /** Meta's {@code MLPBlock} with the residual: lin1 + GELU of h → lin2 added to x in place. */
    private void mlp(Block b, int m, StepMarks marks) {
        if (fp8BlockScaledMlp) {
            // lin1's epilogue quantizes (wideBuf holds e4m3 bytes here), lin2 applies the block scales per k block
            fp8Gemm.runE4m3Out(stream, q8, q8Scales, b.lin1.fp8, b.lin1.b, wideBuf, q8BlockScales, m, true,
                    fp8Gemm.defaultTile(m, mlp, d, true));
            mark(marks, "mlp.lin1");
            fp8Gemm.runBlockScaled(stream, wideBuf, q8BlockScales, b.lin2.fp8, b.lin2.b, x, x, m, false);
            mark(marks, "mlp.lin2");
            return;
        }
        linear(h, true, b.lin1, null, wideBuf, m, mlp, d, true);
        mark(marks, "mlp.lin1");
        linear(wideBuf, false, b.lin2, x, x, m, d, mlp, false);
        mark(marks, "mlp.lin2");
    }

    /** Conv 1x1 → LayerNorm2d → Conv 3x3 → LayerNorm2d, into {@link #output}. */
    private void neck(int batch, int m) {
        gemm.run(stream, x, neck0W, null, null, neckA, m, neckC, d, false);
        norm.layerNorm(stream, neckA, neck1G, neck1B, neckA, m, neckC, NECK_EPS);
        ops.im2col3x3(stream, neckA, wideBuf, batch, e, e, neckC);
        gemm.run(stream, wideBuf, neck2W, null, null, neckB, m, neckC, 9 * neckC, false);
        norm.layerNorm(stream, neckB, neck3G, neck3B, neckB, m, neckC, NECK_EPS);
    }

    /**
     * One encoder Linear of {@code a}: on the e4m3 tensor cores with FP8 ({@code a} quantized first, unless
     * {@code normalized}: then its LayerNorm wrote q8 already), the sparse kernel when it is pruned, else the dense one.
     */
    private void linear(DeviceBuffer a, boolean normalized, Linear l, DeviceBuffer residual, DeviceBuffer c, int m,
                        int n, int k, boolean gelu) {
        if (l.fp8 != null) {
            if (!normalized) {
                fp8Gemm.quantize(stream, a, q8, q8Scales, m, k);
            }
            fp8Gemm.run(stream, q8, q8Scales, l.fp8, l.b, residual, c, m, gelu);
        } else if (l.sparse != null) {
            sparseGemm.run(stream, a, l.sparse, l.b, residual, c, m, gelu, sparseGemm.defaultTile(m, n, k, gelu));
        } else {
            gemm.run(stream, a, l.w, l.b, residual, c, m, n, k, gelu);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Sizes and checks (no GPU needed)
    // ------------------------------------------------------------------------------------------------

    /** Why the kernels cannot run this model at this batch, as an exception; nothing when they can. */
    static void checkSupported(SamConfig c, int maxBatch) {
        List<String> problems = new ArrayList<>();
        if (maxBatch < 1) {
            problems.add("max batch must be at least 1, got " + maxBatch);
        }
        int hd = c.encoderHeadDim();
        if (c.encoderDim() % c.encoderHeads() != 0 || !(hd == 16 || hd == 32 || hd == 64 || hd == 80)) {
            problems.add("encoder head dim " + c.encoderDim() + "/" + c.encoderHeads() + " (kernels: 16, 32, 64, 80)");
        }
        if (c.patchSize() % 8 != 0 || c.imageSize() % c.patchSize() != 0) {
            problems.add("patch size " + c.patchSize() + " (must be a multiple of 8 dividing the image size "
                    + c.imageSize() + ")");
        }
        if (c.encoderDim() % 8 != 0 || c.encoderMlpDim() % 8 != 0 || c.promptDim() % 8 != 0) {
            problems.add("widths " + c.encoderDim() + "/" + c.encoderMlpDim() + "/" + c.promptDim()
                    + " (must be multiples of 8)");
        }
        if (c.encoderDim() > 2048 || c.promptDim() > 2048) {
            problems.add("LayerNorm width above 2048");
        }
        int side = c.embeddingSize();
        if (c.globalAttnIndexes().length > 0 && side > 64) {
            problems.add("global attention over a " + side + "x" + side + " grid (kernels: up to 64x64)");
        }
        if (c.windowSize() > 64 || c.windowSize() < 1) {
            problems.add("window " + c.windowSize() + " (kernels: 1..64)");
        }
        if ((long) maxBatch * side * side > 65535L * 128 || (long) maxBatch * 3 * c.imageSize() * c.imageSize() * 4
                > Integer.MAX_VALUE) {
            problems.add("max batch " + maxBatch + " is too large for one launch / one pinned buffer");
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("the CUDA backend cannot run " + c.describe() + ": "
                    + String.join("; ", problems));
        }
    }

    /** Bytes of the fp32 input images of {@code batch}. */
    static long inputBytes(SamConfig c, int batch) {
        return (long) batch * 3 * c.imageSize() * c.imageSize() * 4;
    }

    /** Bytes of the fp32 channels-first embeddings of {@code batch}. */
    static long outputBytes(SamConfig c, int batch) {
        return (long) batch * c.promptDim() * c.embeddingSize() * c.embeddingSize() * 4;
    }

    /** Columns of the wide buffer: the qkv output, the MLP hidden layer, the patch rows and the 3x3-conv rows. */
    private static int wideColumns(SamConfig c) {
        int d = c.encoderDim(), p = c.patchSize(), n = c.promptDim();
        return Math.max(Math.max(3 * d, c.encoderMlpDim()), Math.max(3 * p * p, 9 * n));
    }

    /** Bytes of the activations of {@code maxBatch} images in the pool (each buffer 256-byte aligned). */
    static long activationBytes(SamConfig c, int maxBatch, ModelPrecision precision) {
        long m = (long) maxBatch * c.embeddingSize() * c.embeddingSize();
        int d = c.encoderDim(), n = c.promptDim();
        long fp8 = precision == ModelPrecision.FP8 ? align(m * Math.max(d, c.encoderMlpDim())) + align(m * 4)
                + align(m * (c.encoderMlpDim() / Fp8GemmKernels.SCALE_BLOCK) * 4) : 0;
        return align(inputBytes(c, maxBatch)) + 2 * align(m * d * 2) + align(m * wideColumns(c) * 2)
                + 2 * align(m * n * 2) + align(outputBytes(c, maxBatch)) + fp8;
    }

    private static long align(long bytes) {
        return BumpAllocator.alignUp(Math.max(bytes, 1));
    }

    /**
     * Bytes the weights take in the pool (each tensor 256-byte aligned): bf16 (an upper bound with 2:4, whose
     * compressed form is smaller), or with FP8 the blocks' Linears as e4m3 bytes + fp32 channel scales.
     */
    static long weightBytes(SamConfig c, ModelPrecision precision) {
        int d = c.encoderDim(), e = c.embeddingSize(), p = c.patchSize(), n = c.promptDim(), m = c.encoderMlpDim();
        long total = align((long) d * 3 * p * p * 2) + align(d * 2L) + align((long) e * e * d * 2);
        for (int i = 0; i < c.encoderDepth(); i++) {
            int side = c.isGlobalAttention(i) ? e : c.windowSize();
            long rel = align((long) (2 * side - 1) * c.encoderHeadDim() * 2);
            total += 4 * align(d * 2L) + linearBytes(3 * d, d, precision) + align(3L * d * 2)
                    + linearBytes(d, d, precision) + align(d * 2L) + 2 * rel + linearBytes(m, d, precision)
                    + align(m * 2L) + linearBytes(d, m, precision) + align(d * 2L);
        }
        total += align((long) n * d * 2) + 4 * align(n * 2L) + align(9L * n * n * 2);
        return total;
    }

    /** A block Linear's weight {@code [out, in]}: bf16, or e4m3 bytes + one fp32 scale per output channel. */
    private static long linearBytes(int out, int in, ModelPrecision precision) {
        return precision == ModelPrecision.FP8 ? align((long) out * in) + align(out * 4L) : align((long) out * in * 2);
    }

    // ------------------------------------------------------------------------------------------------
    // Weights
    // ------------------------------------------------------------------------------------------------

    private Block loadBlock(StateDict sd, String prefix, int blockWindow) {
        int side = blockWindow > 0 ? blockWindow : e;
        String qkv = prefix + "attn.qkv", proj = prefix + "attn.proj", lin1 = prefix + "mlp.lin1", lin2 = prefix + "mlp.lin2";
        // The upload order (the pool's layout) of the single-record form this replaces: the dense weights and biases
        // in module order, then the 2:4 forms.
        DeviceBuffer norm1G = upload(sd.get(prefix + "norm1.weight", d).data(), prefix + "norm1.weight");
        DeviceBuffer norm1B = upload(sd.get(prefix + "norm1.bias", d).data(), prefix + "norm1.bias");
        DeviceBuffer qkvW = denseLinear(sd, qkv, 3 * d, d);
        DeviceBuffer qkvB = upload(sd.get(prefix + "attn.qkv.bias", 3 * d).data(), prefix + "attn.qkv.bias");
        DeviceBuffer projW = denseLinear(sd, proj, d, d);
        DeviceBuffer projB = upload(sd.get(prefix + "attn.proj.bias", d).data(), prefix + "attn.proj.bias");
        DeviceBuffer relH = upload(relPos(sd, prefix + "attn.rel_pos_h", side), prefix + "attn.rel_pos_h");
        DeviceBuffer relW = upload(relPos(sd, prefix + "attn.rel_pos_w", side), prefix + "attn.rel_pos_w");
        DeviceBuffer norm2G = upload(sd.get(prefix + "norm2.weight", d).data(), prefix + "norm2.weight");
        DeviceBuffer norm2B = upload(sd.get(prefix + "norm2.bias", d).data(), prefix + "norm2.bias");
        DeviceBuffer lin1W = denseLinear(sd, lin1, mlp, d);
        DeviceBuffer lin1B = upload(sd.get(prefix + "mlp.lin1.bias", mlp).data(), prefix + "mlp.lin1.bias");
        DeviceBuffer lin2W = denseLinear(sd, lin2, d, mlp);
        DeviceBuffer lin2B = upload(sd.get(prefix + "mlp.lin2.bias", d).data(), prefix + "mlp.lin2.bias");
        SparseWeight qkvS = sparseLinear(sd, qkv, 3 * d, d), projS = sparseLinear(sd, proj, d, d);
        SparseWeight lin1S = sparseLinear(sd, lin1, mlp, d), lin2S = sparseLinear(sd, lin2, d, mlp);
        Fp8Weight qkv8 = fp8Linear(sd, qkv, 3 * d, d), proj8 = fp8Linear(sd, proj, d, d);
        Fp8Weight lin18 = fp8Linear(sd, lin1, mlp, d), lin28 = fp8Linear(sd, lin2, d, mlp);
        return new Block(norm1G, norm1B, new Linear(qkvW, qkvS, qkv8, qkvB), new Linear(projW, projS, proj8, projB),
                relH, relW, norm2G, norm2B, new Linear(lin1W, lin1S, lin18, lin1B), new Linear(lin2W, lin2S, lin28, lin2B),
                blockWindow);
    }

    /** The bf16 weight of a Linear that stays dense bf16; null for a pruned one or with FP8 (the forms below). */
    private DeviceBuffer denseLinear(StateDict sd, String module, int out, int in) {
        float[] w = sd.get(module + ".weight", out, in).data();
        return fp8 || SparseEncoder.isPruned(sparsity, module)
                ? null : upload(w, module + ".weight");
    }

    /** The e4m3 form of a block Linear with FP8 (quantized here, once); null in bf16. */
    private Fp8Weight fp8Linear(StateDict sd, String module, int out, int in) {
        return fp8 ? Fp8WeightUpload.upload(sd.get(module + ".weight", out, in).data(), out, in, pool, stream, staging,
                module + ".weight") : null;
    }

    /** The 2:4 form of a pruned Linear (its weight must be 2:4 already); null for a dense one. */
    private SparseWeight sparseLinear(StateDict sd, String module, int out, int in) {
        if (!SparseEncoder.isPruned(sparsity, module)) {
            return null;
        }
        TwoFourWeights w = TwoFourWeights.compress(sd.get(module + ".weight", out, in).data(), out, in,
                module + ".weight");
        return SparseWeightUpload.upload(w, pool, stream, staging, module + ".weight");
    }

    /** A rel_pos table with exactly 2 * side - 1 rows, resampled as get_rel_pos does when it has another length. */
    private float[] relPos(StateDict sd, String key, int side) {
        Tensor t = sd.get(key);
        if (t.rank() != 2 || t.dim(1) != headDim || t.dim(0) < 1) {
            throw new IllegalArgumentException(key + " has shape " + t.shapeString() + ", expected [L, " + headDim + "]");
        }
        int needed = 2 * side - 1;
        return t.dim(0) == needed ? t.data() : resizeLinear(t.data(), t.dim(0), headDim, needed);
    }

    /** F.interpolate(mode="linear") of each column from {@code length} to {@code outLength} points (as the CPU backend). */
    static float[] resizeLinear(float[] table, int length, int dim, int outLength) {
        float[] res = new float[outLength * dim];
        float scale = (float) length / (float) outLength;
        for (int i = 0; i < outLength; i++) {
            float src = Math.max(scale * (i + 0.5f) - 0.5f, 0f);
            int i0 = Math.min((int) Math.floor(src), length - 1);
            int i1 = i0 + (i0 < length - 1 ? 1 : 0);
            float l1 = Math.min(Math.max(src - i0, 0f), 1f), l0 = 1f - l1;
            for (int c = 0; c < dim; c++) {
                res[i * dim + c] = l0 * table[i0 * dim + c] + l1 * table[i1 * dim + c];
            }
        }
        return res;
    }


    /** Uploads fp32 values as bf16 through the staging buffer (construction only: synchronous). */
    private DeviceBuffer upload(float[] values, String what) {
        return new DeviceWeights(pool, stream, staging).bf16(values, what);
    }
}
