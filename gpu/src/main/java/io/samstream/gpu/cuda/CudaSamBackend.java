package io.samstream.gpu.cuda;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuSamBackend;
import io.samstream.gpu.image.FrameImage;
import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.config.CudaSettings;
import io.samstream.config.ModelSparsity;
import io.samstream.gpu.cuda.SparseGemmKernels.SparseWeight;
import io.samstream.gpu.sparse.SparseEncoder;
import io.samstream.gpu.sparse.TwoFourWeights;

/**
 * SAM with the image encoder on a CUDA GPU in bf16 (fp32 accumulation), on the kernels of
 * {@code gpu/src/main/cuda}.
 *
 * <p><b>Image encoder.</b> Activations are channels-last tokens {@code [B * E * E, C]} throughout, bf16:
 * <ol>
 *   <li>fp32 image upload (pinned, async) → patch rows by index mapping ({@code patchify}) → one GEMM with
 *       the conv bias → + absolute position embedding;</li>
 *   <li>per block: LayerNorm → qkv GEMM (+bias) → flash attention with the decomposed relative position
 *       bias (windowed blocks partition / pad / unpartition by index mapping inside the kernel) → proj GEMM
 *       (+bias +residual, in place) → LayerNorm → lin1 GEMM (+bias, GELU) → lin2 GEMM (+bias +residual);</li>
 *   <li>neck: 1x1 conv as a GEMM → LayerNorm2d (a row LayerNorm over the channels of each pixel) → 3x3 conv
 *       as rows ({@code im2col3x3}, weight re-laid out {@code [O, 3, 3, C]}) + GEMM → LayerNorm2d: bf16
 *       channels-last embeddings. {@link #embedFrames} (the engine) copies each into a slot of the device
 *       {@link EmbeddingRing}; {@link #encode} and {@link #encodeFrames} make them fp32 channels-first
 *       {@code [B, C, E, E]} (a transposing kernel) and download them.</li>
 * </ol>
 * The residual stream is kept in bf16, as in Meta's bf16 model.
 *
 * <p><b>Memory.</b> One device pool, sized when the backend is made: the bf16 weights (uploaded once) plus
 * the activations of the largest batch ({@code maxBatch}); two pinned host buffers for the input and the
 * output of the largest batch. A forward pass allocates nothing and does not wait on the host until its
 * result has to be read. Buffers are reused across blocks: {@code x} (the residual stream), {@code h}
 * (normalized tokens, then the attention output), and one "wide" buffer holding in turn the patch rows,
 * the qkv output, the MLP hidden layer and the 3x3-conv rows.
 *
 * <p><b>Mask decoder.</b> {@link #decode}, {@link #decodeBatch} and {@link #decodeWave} run the prompt encoder
 * and mask decoder on the GPU ({@link CudaMaskDecoder}: batched over the prompt sets of up to 16 images, up
 * to {@code maxPromptSets} per batch, more are chunked), on its own stream, memory pool and lock: a decode
 * runs while another thread encodes, and the two streams overlap on the GPU. An embedding in the ring is
 * read in place after the event the encoder recorded behind it; a host tensor is uploaded. Decoders the kernels cannot run (see
 * {@link CudaMaskDecoder#unsupported}) fall back to the CPU fp32 decoder ({@link CpuSamBackend#decoderOnly}).
 *
 * <p><b>Pre- and post-processing.</b> {@link #encodeFrames} uploads 8-bit frames and resizes / normalizes /
 * pads them into the encoder input on the encoder stream ({@link GpuFramePreprocessor});
 * {@link #postprocessMasks} upscales, thresholds and summarizes mask logits on its own stream
 * ({@link GpuMaskPostprocessor}). Both are made at first use, with their own buffers.
 *
 * <p><b>CUDA graphs.</b> The forward pass of each batch size is captured into a CUDA graph the first time
 * that size runs and replayed after that: one launch instead of ~100, and no per-kernel launch gaps (what
 * matters at batch 1). One graph per batch size actually used (not padded up to a few captured sizes: the
 * graphs are small, and padding would cost up to 2x the compute); all of them name the same pool buffers,
 * which never move. {@code samstream.cuda.graphs = off} ({@code -Dsamstream.cuda.graphs=false}) runs every
 * pass eagerly instead.
 *
 * <p>Thread-safe: {@link #encode} calls are serialized (one stream, one set of activation buffers), decode
 * calls are serialized among themselves, independently of encode.
 * Inputs larger than {@code maxBatch} or of the wrong size are refused with an {@link IllegalArgumentException}
 * before anything is queued.
 */
public final class CudaSamBackend implements SamBackend {
    private static final Logger log = LoggerFactory.getLogger(CudaSamBackend.class);
    private static final float ENCODER_EPS = 1e-6f, NECK_EPS = 1e-6f;

    private final SamConfig config;
    private final int maxBatch;
    private final int s, p, e, tokens, d, heads, headDim, mlp, neckC, window, wide;
    private final CudaContext context;
    private final CudaKernels kernels;
    private final CudaStream stream;
    private final DeviceMemoryPool pool;
    private final PinnedBuffer inPinned, outPinned;
    private final CpuSamBackend decoder;
    private final CudaMaskDecoder gpuDecoder;
    private final EmbeddingRing ring;

    // weights
    private final DeviceBuffer patchW, patchB, posEmbed;
    private final Block[] blocks;
    private final DeviceBuffer neck0W, neck1G, neck1B, neck2W, neck3G, neck3B;
    // activations (largest batch)
    private final DeviceBuffer image, x, h, wideBuf, neckA, neckB, out;
    private final long weightBytes, activationBytes;
    private volatile boolean closed;
    // GPU pre- and post-processing (encodeFrames, postprocessMasks), made at first use; guarded by imageOpsLock.
    private final Object imageOpsLock = new Object();
    private ImageOpsKernels imageOps;
    private GpuFramePreprocessor framePreprocessor;
    private GpuMaskPostprocessor maskPostprocessor;
    /** Whether forward passes replay CUDA graphs ({@code samstream.cuda.graphs}). */
    private final boolean useGraphs;
    /** Captured forward passes by batch size (made on first use). */
    private final Map<Integer, CudaGraph> graphs = new HashMap<>();

    /** One encoder block's weights; a pruned Linear has its 2:4 form ({@code ...S}) and no dense one ({@code ...W} null). */
    private record Block(DeviceBuffer norm1G, DeviceBuffer norm1B, DeviceBuffer qkvW, DeviceBuffer qkvB,
                         DeviceBuffer projW, DeviceBuffer projB, DeviceBuffer relH, DeviceBuffer relW,
                         DeviceBuffer norm2G, DeviceBuffer norm2B, DeviceBuffer lin1W, DeviceBuffer lin1B,
                         DeviceBuffer lin2W, DeviceBuffer lin2B, int window, SparseWeight qkvS, SparseWeight projS,
                         SparseWeight lin1S, SparseWeight lin2S) {}

    /** Encoder weight sparsity: which block Linears run on the sparse tensor cores (gemm_sparse.cuh). */
    private final ModelSparsity sparsity;

    /**
     * Opens device 0, checks the model fits the kernels, sizes the pool and uploads the weights.
     *
     * @param weights        the checkpoint's tensors under Meta's key names
     * @param config         the model's shape (normally inferred from the same checkpoint)
     * @param maxBatch       the largest batch {@link #encode} will take (activations are sized for it)
     * @param decoderThreads CPU threads of the mask decoder
     * @throws IllegalArgumentException when the model's shape is not one the kernels support
     * @throws CudaException            when the GPU is unusable or too small
     */
    public CudaSamBackend(StateDict weights, SamConfig config, int maxBatch, int decoderThreads) {
        this(weights, config, maxBatch, decoderThreads, DEFAULT_MAX_PROMPT_SETS);
    }

    /** Prompt sets the GPU mask decoder takes in one batch unless told otherwise (SAM's automatic mask generator uses 64). */
    public static final int DEFAULT_MAX_PROMPT_SETS = 64;

    /**
     * As {@link #CudaSamBackend(StateDict, SamConfig, int, int)}, with the GPU mask decoder's memory sized for
     * {@code maxPromptSets} prompt sets per batch ({@link #decodeBatch} chunks larger calls).
     *
     * @param decoderThreads CPU threads of the fallback CPU mask decoder (used only when the GPU one cannot run
     *                       the model)
     */
    public CudaSamBackend(StateDict weights, SamConfig config, int maxBatch, int decoderThreads, int maxPromptSets) {
        this(weights, config, maxBatch, decoderThreads, maxPromptSets, ModelSparsity.NONE);
    }

    /**
     * As {@link #CudaSamBackend(StateDict, SamConfig, int, int)} with 2:4 sparsity: the Linears {@code sparsity}
     * names must already be pruned in {@code weights} ({@link SparseEncoder#apply}; a dense one is an error) and
     * run on the sparse tensor cores; the others stay dense.
     */
    public CudaSamBackend(StateDict weights, SamConfig config, int maxBatch, int decoderThreads, ModelSparsity sparsity) {
        this(weights, config, maxBatch, decoderThreads, DEFAULT_MAX_PROMPT_SETS, sparsity);
    }

    public CudaSamBackend(StateDict weights, SamConfig config, int maxBatch, int decoderThreads, int maxPromptSets,
                          ModelSparsity sparsity) {
        this(weights, config, maxBatch, decoderThreads, maxPromptSets, sparsity, DEFAULT_RING_BATCHES * maxBatch);
    }

    /** Embedding slots of the device ring unless told otherwise, in batches: the engine's in-flight 2, + 2. */
    public static final int DEFAULT_RING_BATCHES = 4;
    /** How long {@link #embedFrames} waits for free embedding slots before it fails. */
    static final long RING_ACQUIRE_TIMEOUT_MILLIS = 60_000;

    /** As the complete form below, with the {@code samstream.cuda} defaults. */
    public CudaSamBackend(StateDict weights, SamConfig config, int maxBatch, int decoderThreads, int maxPromptSets,
                          ModelSparsity sparsity, int embeddingSlots) {
        this(weights, config, maxBatch, decoderThreads, maxPromptSets, sparsity, embeddingSlots, CudaSettings.DEFAULTS);
    }

    /**
     * The complete form.
     *
     * @param embeddingSlots embeddings the device ring holds ({@link #embedFrames}): at least {@code maxBatch};
     *                       the engine needs (in-flight batches + 1) x max batch to never wait for a slot
     * @param options        the {@code samstream.cuda} section: CUDA graphs of the encoder and of the mask decoder
     */
    public CudaSamBackend(StateDict weights, SamConfig config, int maxBatch, int decoderThreads, int maxPromptSets,
                          ModelSparsity sparsity, int embeddingSlots, CudaSettings options) {
        if (sparsity == null) {
            throw new IllegalArgumentException("sparsity must not be null (ModelSparsity.NONE for the dense model)");
        }
        this.sparsity = sparsity;
        this.useGraphs = options.graphs();
        this.config = config;
        this.maxBatch = maxBatch;
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
        checkSupported(config, maxBatch);
        if (embeddingSlots < maxBatch) {
            throw new IllegalArgumentException("the embedding ring needs at least max batch (" + maxBatch
                    + ") slots, got " + embeddingSlots);
        }
        this.wide = Math.max(Math.max(3 * d, mlp), Math.max(3 * p * p, 9 * neckC));

        long m = (long) maxBatch * tokens;
        long imageBytes = (long) maxBatch * 3 * s * s * 4, outBytes = (long) maxBatch * neckC * tokens * 4;
        long activations = align(imageBytes) + 2 * align(m * d * 2) + align(m * wide * 2) + 2 * align(m * neckC * 2)
                + align(outBytes);
        long weightsSize = weightBytes(config);
        this.weightBytes = weightsSize;
        this.activationBytes = activations;

        this.context = CudaContext.open(0);
        CudaKernels k = null;
        CudaStream st = null;
        DeviceMemoryPool pl = null;
        PinnedBuffer in = null, o = null;
        CpuSamBackend dec = null;
        CudaMaskDecoder gdec = null;
        EmbeddingRing rg = null;
        try {
            k = new CudaKernels(context);
            rg = new EmbeddingRing(context, k, embeddingSlots, neckC, e, RING_ACQUIRE_TIMEOUT_MILLIS);
            st = new CudaStream(context);
            pl = new DeviceMemoryPool(context, weightsSize + activations);
            in = new PinnedBuffer(context, Math.max(imageBytes, 16L << 20), "encoder input");
            o = new PinnedBuffer(context, outBytes, "encoder output");
            if (weights.hasPrefix("mask_decoder.")) {
                String why = CudaMaskDecoder.unsupported(config);
                if (why == null) {
                    gdec = new CudaMaskDecoder(weights, config, context, k, maxPromptSets, options.decoderGraphs());
                } else {
                    log.warn("mask decoder on the CPU: the CUDA decoder kernels cannot run it ({})", why);
                    dec = CpuSamBackend.decoderOnly(weights, config, Math.max(1, decoderThreads));
                }
            }
        } catch (RuntimeException | Error ex) {
            closeAll(gdec, dec, o, in, pl, st, rg, k);
            context.close();
            throw ex;
        }
        this.ring = rg;
        this.kernels = k;
        this.stream = st;
        this.pool = pl;
        this.inPinned = in;
        this.outPinned = o;
        this.decoder = dec;
        this.gpuDecoder = gdec;
        try {
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

            image = pool.allocate(imageBytes, "encoder input image (fp32)");
            x = pool.allocateBf16(m * d, "tokens x");
            h = pool.allocateBf16(m * d, "tokens h");
            wideBuf = pool.allocateBf16(m * wide, "wide activations");
            neckA = pool.allocateBf16(m * neckC, "neck a");
            neckB = pool.allocateBf16(m * neckC, "neck b");
            out = pool.allocate(outBytes, "embeddings (fp32)");
        } catch (RuntimeException | Error ex) {
            close();
            throw ex;
        }
        log.info("cuda backend: {} on {}, max batch {}: device pool {} (weights {}, activations {}), embedding ring {}"
                + " ({} slots), pinned {}", config.describe(), context.info().describe(), maxBatch,
                Cuda.bytes(pool.capacity()), Cuda.bytes(weightBytes), Cuda.bytes(activationBytes),
                Cuda.bytes(ring.bytes()), ring.capacity(), Cuda.bytes(inPinned.bytes() + outPinned.bytes()));
    }

    /** Why the kernels cannot run this model, or nothing. */
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

    private static long align(long bytes) {
        return BumpAllocator.alignUp(Math.max(bytes, 1));
    }

    /** Bytes the bf16 weights take in the pool (each tensor 256-byte aligned). */
    static long weightBytes(SamConfig c) {
        int d = c.encoderDim(), e = c.embeddingSize(), p = c.patchSize(), n = c.promptDim(), m = c.encoderMlpDim();
        long total = align((long) d * 3 * p * p * 2) + align(d * 2L) + align((long) e * e * d * 2);
        for (int i = 0; i < c.encoderDepth(); i++) {
            int side = c.isGlobalAttention(i) ? e : c.windowSize();
            long rel = align((long) (2 * side - 1) * c.encoderHeadDim() * 2);
            total += 4 * align(d * 2L) + align(3L * d * d * 2) + align(3L * d * 2) + align((long) d * d * 2)
                    + align(d * 2L) + 2 * rel + align((long) m * d * 2) + align(m * 2L) + align((long) d * m * 2)
                    + align(d * 2L);
        }
        total += align((long) n * d * 2) + 4 * align(n * 2L) + align(9L * n * n * 2);
        return total;
    }

    private Block loadBlock(StateDict sd, String prefix, int blockWindow) {
        int side = blockWindow > 0 ? blockWindow : e;
        String qkv = prefix + "attn.qkv", proj = prefix + "attn.proj", lin1 = prefix + "mlp.lin1", lin2 = prefix + "mlp.lin2";
        return new Block(
                upload(sd.get(prefix + "norm1.weight", d).data(), prefix + "norm1.weight"),
                upload(sd.get(prefix + "norm1.bias", d).data(), prefix + "norm1.bias"),
                denseLinear(sd, qkv, 3 * d, d),
                upload(sd.get(prefix + "attn.qkv.bias", 3 * d).data(), prefix + "attn.qkv.bias"),
                denseLinear(sd, proj, d, d),
                upload(sd.get(prefix + "attn.proj.bias", d).data(), prefix + "attn.proj.bias"),
                upload(relPos(sd, prefix + "attn.rel_pos_h", side), prefix + "attn.rel_pos_h"),
                upload(relPos(sd, prefix + "attn.rel_pos_w", side), prefix + "attn.rel_pos_w"),
                upload(sd.get(prefix + "norm2.weight", d).data(), prefix + "norm2.weight"),
                upload(sd.get(prefix + "norm2.bias", d).data(), prefix + "norm2.bias"),
                denseLinear(sd, lin1, mlp, d),
                upload(sd.get(prefix + "mlp.lin1.bias", mlp).data(), prefix + "mlp.lin1.bias"),
                denseLinear(sd, lin2, d, mlp),
                upload(sd.get(prefix + "mlp.lin2.bias", d).data(), prefix + "mlp.lin2.bias"),
                blockWindow,
                sparseLinear(sd, qkv, 3 * d, d), sparseLinear(sd, proj, d, d), sparseLinear(sd, lin1, mlp, d),
                sparseLinear(sd, lin2, d, mlp));
    }

    /** The bf16 weight of a Linear that stays dense; null for a pruned one (it has {@link #sparseLinear}). */
    private DeviceBuffer denseLinear(StateDict sd, String module, int out, int in) {
        float[] w = sd.get(module + ".weight", out, in).data();
        return SparseEncoder.isPruned(sparsity, module)
                ? null : upload(w, module + ".weight");
    }

    /** The 2:4 form of a pruned Linear (its weight must be 2:4 already); null for a dense one. */
    private SparseWeight sparseLinear(StateDict sd, String module, int out, int in) {
        if (!SparseEncoder.isPruned(sparsity, module)) {
            return null;
        }
        TwoFourWeights w = TwoFourWeights.compress(sd.get(module + ".weight", out, in).data(), out, in,
                module + ".weight");
        return SparseWeightUpload.upload(w, pool, stream, inPinned, module + ".weight");
    }

    /** One encoder Linear: the sparse kernel when it is pruned, else the dense one. */
    private void linear(DeviceBuffer a, DeviceBuffer dense, SparseWeight sparse, DeviceBuffer bias, DeviceBuffer residual,
                        DeviceBuffer c, int m, int n, int k, boolean gelu) {
        if (sparse != null) {
            kernels.sparseGemm().run(stream, a, sparse, bias, residual, c, m, gelu, kernels.sparseGemm().defaultTile(m, n, k, gelu));
        } else {
            kernels.gemm().run(stream, a, dense, bias, residual, c, m, n, k, gelu);
        }
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

    /** Conv2d weight {@code [O, C, 3, 3]} to {@code [O, 3, 3, C]}: the column order of {@code im2col3x3}. */
    static float[] conv3x3ChannelsLast(float[] w, int outC, int inC) {
        float[] r = new float[w.length];
        for (int o = 0; o < outC; o++) {
            for (int c = 0; c < inC; c++) {
                for (int tap = 0; tap < 9; tap++) {
                    r[(o * 9 + tap) * inC + c] = w[(o * inC + c) * 9 + tap];
                }
            }
        }
        return r;
    }

    /** Uploads fp32 values as bf16 through the input staging buffer (construction only: synchronous). */
    private DeviceBuffer upload(float[] values, String what) {
        DeviceBuffer b = pool.allocateBf16(values.length, what);
        int chunk = (int) Math.min(inPinned.bytes() / 2, 1 << 24);
        ByteBuffer buf = inPinned.buffer();
        for (int start = 0; start < values.length; start += chunk) {
            int n = Math.min(chunk, values.length - start);
            buf.clear();
            for (int i = 0; i < n; i++) {
                buf.putShort(Bf16.fromFloat(values[start + i]));
            }
            stream.upload(inPinned, 0, b, (long) start * 2, (long) n * 2);
            stream.synchronize();
        }
        return b;
    }

    // ------------------------------------------------------------------------------------------------

    @Override
    public SamConfig config() {
        return config;
    }

    /** NVDEC's GPU frames on device 0's primary context (this backend's) are read in place. */
    @Override
    public boolean readsDeviceFrames() {
        return true;
    }

    @Override
    public String name() {
        return "cuda bf16 (" + context.info().name() + ", max batch " + maxBatch
                + (sparsity.twoFour() ? ", encoder " + sparsity.describe() : "")
                + "; mask decoder on the "
                + (gpuDecoder != null ? "gpu, " + gpuDecoder.maxSets() + " prompt sets per batch)" : "cpu)");
    }

    public int maxBatch() {
        return maxBatch;
    }

    /** Bytes of the device pool (weights + activations of the largest batch). */
    public long poolBytes() {
        return pool.capacity();
    }

    public long weightBytes() {
        return weightBytes;
    }

    public CudaContext context() {
        return context;
    }

    @Override
    public synchronized Tensor encode(Tensor images) {
        return encode(images, useGraphs);
    }

    /** As {@link #encode(Tensor)}, replaying the batch's CUDA graph or queueing every kernel (for tests, benchmarks). */
    public synchronized Tensor encode(Tensor images, boolean graph) {
        int batch = checkImages(images);
        FloatBuffer fin = inPinned.buffer().asFloatBuffer();
        fin.put(images.data(), 0, batch * 3 * s * s);
        long inBytes = (long) batch * 3 * s * s * 4;
        stream.upload(inPinned, 0, image, 0, inBytes);
        runForward(batch, graph);
        return downloadEmbeddings(batch);
    }

    /**
     * {@link SamBackend#encodeFrames} with the pre-processing on the GPU: the 8-bit frames are staged in
     * pinned memory, uploaded asynchronously and resized / normalized / padded straight into the encoder's
     * input buffer on the encoder stream ({@link GpuFramePreprocessor}; the same values as the CPU default).
     */
    @Override
    public synchronized Tensor encodeFrames(List<? extends FrameImage> frames) {
        ensureOpen();
        int batch = frames.size();
        if (batch < 1 || batch > maxBatch) {
            throw new IllegalArgumentException("batch of " + batch + " frames, but this CUDA backend was sized for 1.."
                    + maxBatch + " (raise the max batch, or split the batch)");
        }
        framePreprocessor().enqueue(stream, frames, image);
        runForward(batch, useGraphs);
        return downloadEmbeddings(batch);
    }

    private GpuFramePreprocessor framePreprocessor() {
        synchronized (imageOpsLock) {
            if (framePreprocessor == null) {
                framePreprocessor = new GpuFramePreprocessor(context, imageOps(), s, 2 * maxBatch);
            }
            return framePreprocessor;
        }
    }

    /**
     * The engine's encoder: frames pre-processed on the GPU, the forward pass, and each frame's embedding
     * (bf16 channels-last, as the neck leaves it) copied into a slot of the device ring, whose event is
     * recorded behind it. Returns once the work is queued: it waits for free slots and for the pinned staging
     * of the frames, never for the GPU, so the next batch is staged while this one runs.
     */
    @Override
    public List<ImageEmbedding> embedFrames(List<? extends FrameImage> frames) {
        ensureOpen();
        int batch = frames.size();
        if (batch < 1 || batch > maxBatch) {
            throw new IllegalArgumentException("batch of " + batch + " frames, but this CUDA backend was sized for 1.."
                    + maxBatch + " (raise the max batch, or split the batch)");
        }
        List<EmbeddingRing.Slot> slots = ring.acquire(batch);
        try {
            synchronized (this) {
                ensureOpen();
                framePreprocessor().enqueue(stream, frames, image);
                runForward(batch, useGraphs);
                long bytes = 2L * tokens * neckC;
                for (int i = 0; i < batch; i++) {
                    stream.copy(neckB.slice(i * bytes, bytes, "embedding " + i), slots.get(i).buffer(), bytes);
                    slots.get(i).markWritten(stream);
                }
            }
        } catch (RuntimeException | Error ex) {
            slots.forEach(EmbeddingRing.Slot::close);
            throw ex;
        }
        return new ArrayList<>(slots);
    }

    /** The device ring the engine's embeddings live in ({@link #embedFrames}). */
    public EmbeddingRing embeddingRing() {
        return ring;
    }

    /** Waits for the queued forward pass and copies its {@code batch} embeddings to a Java tensor. */
    private Tensor downloadEmbeddings(int batch) {
        kernels.encoderOps().tokensToChw(stream, neckB, out, batch, tokens, neckC);
        long outBytes = (long) batch * neckC * tokens * 4;
        stream.download(out, 0, outPinned, 0, outBytes);
        stream.synchronize();
        float[] result = new float[batch * neckC * tokens];
        outPinned.buffer().asFloatBuffer().get(result);
        return new Tensor(result, batch, neckC, e, e);
    }

    /**
     * {@link SamBackend#postprocessMasks} on the GPU ({@link GpuMaskPostprocessor}, its own stream, so it
     * does not wait for an encoder batch); the same values as the CPU default.
     */
    @Override
    public List<MaskSummary> postprocessMasks(Tensor lowResLogits, ImageSize resized, ImageSize original) {
        return maskPostprocessor().run(lowResLogits, resized, original);
    }

    /** Every frame of the wave in one upload, one set of launches and one download ({@link GpuMaskPostprocessor#runAll}). */
    @Override
    public List<List<MaskSummary>> postprocessWave(List<MaskRequest> requests) {
        return maskPostprocessor().runAll(requests);
    }

    /** The GPU mask post-processor, e.g. for logits a GPU decoder leaves on the device. */
    public GpuMaskPostprocessor maskPostprocessor() {
        synchronized (imageOpsLock) {
            ensureOpen();
            if (maskPostprocessor == null) {
                maskPostprocessor = new GpuMaskPostprocessor(context, imageOps(), s);
            }
            return maskPostprocessor;
        }
    }

    private ImageOpsKernels imageOps() {
        if (imageOps == null) {
            imageOps = new ImageOpsKernels(kernels);
        }
        return imageOps;
    }

    private int checkImages(Tensor images) {
        ensureOpen();
        if (images.rank() != 4 || images.dim(1) != 3 || images.dim(2) != s || images.dim(3) != s) {
            throw new IllegalArgumentException("images must be [B, 3, " + s + ", " + s + "], got " + images.shapeString());
        }
        int batch = images.dim(0);
        if (batch < 1 || batch > maxBatch) {
            throw new IllegalArgumentException("batch of " + batch + " images, but this CUDA backend was sized for at most "
                    + maxBatch + " (raise the max batch, or split the batch)");
        }
        return batch;
    }

    /**
     * Uploads images to the device input buffer and waits: for benchmarks, which then time
     * {@link #timeForward} on them without host copies.
     */
    public synchronized void stageInput(Tensor images) {
        int batch = checkImages(images);
        inPinned.buffer().asFloatBuffer().put(images.data(), 0, batch * 3 * s * s);
        stream.upload(inPinned, 0, image, 0, (long) batch * 3 * s * s * 4);
        stream.synchronize();
    }

    /**
     * GPU time of one forward pass on the staged input, in milliseconds: the mean over {@code iterations}
     * passes queued back to back between two events (no host copies), run as {@link #encode} runs them.
     */
    public synchronized double timeForward(int batch, int iterations) {
        return timeForward(batch, iterations, useGraphs);
    }

    /** As {@link #timeForward(int, int)}, replaying the batch's CUDA graph or queueing every kernel. */
    public synchronized double timeForward(int batch, int iterations, boolean graph) {
        ensureOpen();
        if (batch < 1 || batch > maxBatch) {
            throw new IllegalArgumentException("batch " + batch + " outside 1.." + maxBatch);
        }
        try (CudaEvent start = new CudaEvent(context, true); CudaEvent end = new CudaEvent(context, true)) {
            if (graph) {
                graphFor(batch);   // the capture (first use) stays out of the timing
            }
            stream.record(start);
            for (int i = 0; i < iterations; i++) {
                runForward(batch, graph);
            }
            stream.record(end);
            end.synchronize();
            return CudaEvent.elapsedMillis(start, end) / iterations;
        }
    }

    /**
     * GPU milliseconds per kind of step of one forward pass (patch embedding, LayerNorm, qkv, windowed /
     * global attention, proj, lin1, lin2, neck), from events recorded between the launches, summed over
     * {@code iterations} passes and divided by them. The events cost a little time of their own.
     */
    public synchronized Map<String, Double> profileForward(int batch, int iterations) {
        ensureOpen();
        if (batch < 1 || batch > maxBatch) {
            throw new IllegalArgumentException("batch " + batch + " outside 1.." + maxBatch);
        }
        List<String> labels = new ArrayList<>();
        List<CudaEvent> events = new ArrayList<>();
        Map<String, Double> totals = new LinkedHashMap<>();
        try {
            for (int it = 0; it < iterations; it++) {
                labels.clear();
                Profiler prof = new Profiler(labels, events);
                prof.mark("start");
                enqueueForward(batch, prof);
                stream.synchronize();
                for (int i = 1; i < labels.size(); i++) {
                    totals.merge(labels.get(i), (double) CudaEvent.elapsedMillis(events.get(i - 1), events.get(i)),
                            Double::sum);
                }
            }
        } finally {
            events.forEach(CudaEvent::close);
        }
        totals.replaceAll((k, v) -> v / iterations);
        return totals;
    }

    /** Records a timing event after each step (events are made on first use and reused). */
    private final class Profiler {
        final List<String> labels;
        final List<CudaEvent> events;

        Profiler(List<String> labels, List<CudaEvent> events) {
            this.labels = labels;
            this.events = events;
        }

        void mark(String label) {
            int i = labels.size();
            if (events.size() <= i) {
                events.add(new CudaEvent(context, true));
            }
            labels.add(label);
            stream.record(events.get(i));
        }
    }

    /** Whether forward passes replay CUDA graphs (see the class doc). */
    public boolean usesGraphs() {
        return useGraphs;
    }

    /** Queues one forward pass: a replay of the batch's graph, or every kernel one by one. */
    private void runForward(int batch, boolean graph) {
        if (graph) {
            graphFor(batch).launch(stream);
        } else {
            enqueueForward(batch, null);
        }
    }

    private CudaGraph graphFor(int batch) {
        CudaGraph g = graphs.get(batch);
        if (g == null) {
            g = CudaGraph.capture(stream, () -> enqueueForward(batch, null), "the encoder forward pass at batch " + batch);
            graphs.put(batch, g);
        }
        return g;
    }

    /** Queues one forward pass of {@code batch} images from {@link #image} to {@link #out}. */
    private void enqueueForward(int batch, Profiler prof) {
        int m = batch * tokens;
        long md = (long) m * d;
        kernels.encoderOps().patchify(stream, image, wideBuf, batch, s, p);
        kernels.gemm().run(stream, wideBuf, patchW, patchB, null, x, m, d, 3 * p * p, false);
        kernels.encoderOps().addPeriodic(stream, x, posEmbed, md, (long) tokens * d);
        mark(prof, "patch_embed");
        for (Block b : blocks) {
            kernels.norm().layerNorm(stream, x, b.norm1G, b.norm1B, h, m, d, ENCODER_EPS);
            mark(prof, "layernorm");
            linear(h, b.qkvW, b.qkvS, b.qkvB, null, wideBuf, m, 3 * d, d, false);
            mark(prof, "qkv");
            kernels.attention().run(stream, wideBuf, b.window > 0 ? b.qkvB : null, b.relH, b.relW, h, batch, e, e, heads,
                    headDim, b.window);
            mark(prof, b.window > 0 ? "attention windowed" : "attention global");
            linear(h, b.projW, b.projS, b.projB, x, x, m, d, d, false);
            mark(prof, "proj");
            kernels.norm().layerNorm(stream, x, b.norm2G, b.norm2B, h, m, d, ENCODER_EPS);
            mark(prof, "layernorm");
            linear(h, b.lin1W, b.lin1S, b.lin1B, null, wideBuf, m, mlp, d, true);
            mark(prof, "mlp.lin1");
            linear(wideBuf, b.lin2W, b.lin2S, b.lin2B, x, x, m, d, mlp, false);
            mark(prof, "mlp.lin2");
        }
        kernels.gemm().run(stream, x, neck0W, null, null, neckA, m, neckC, d, false);
        kernels.norm().layerNorm(stream, neckA, neck1G, neck1B, neckA, m, neckC, NECK_EPS);
        kernels.encoderOps().im2col3x3(stream, neckA, wideBuf, batch, e, e, neckC);
        kernels.gemm().run(stream, wideBuf, neck2W, null, null, neckB, m, neckC, 9 * neckC, false);
        kernels.norm().layerNorm(stream, neckB, neck3G, neck3B, neckB, m, neckC, NECK_EPS);
        mark(prof, "neck");
    }

    private static void mark(Profiler prof, String label) {
        if (prof != null) {
            prof.mark(label);
        }
    }

    /** The GPU mask decoder (for its timings), or null when the decoder runs on the CPU or there is none. */
    public CudaMaskDecoder maskDecoder() {
        return gpuDecoder;
    }

    /** Not synchronized with {@link #encode}: the decoder has its own stream and lock. */
    @Override
    public DecoderOutput decode(Tensor embedding, Prompt prompt, boolean multimask) {
        return decodeBatch(embedding, java.util.Collections.singletonList(prompt), multimask).get(0);
    }

    /** All prompt sets of one image on the GPU, batched (see {@link CudaMaskDecoder}); not synchronized with encode. */
    @Override
    public List<DecoderOutput> decodeBatch(Tensor embedding, List<Prompt> prompts, boolean multimask) {
        return decodeBatch(ImageEmbedding.of(embedding), prompts, multimask);
    }

    /**
     * As above, reading a ring slot in place (after its encoder event) or uploading a host tensor. The outputs'
     * logits are on the host (one download), so they stay readable after later calls.
     */
    @Override
    public List<DecoderOutput> decodeBatch(ImageEmbedding embedding, List<Prompt> prompts, boolean multimask) {
        List<DecoderOutput> out = decodeWave(List.of(new DecodeRequest(embedding, prompts, multimask))).get(0);
        out.forEach(DecoderOutput::lowResLogits);
        return out;
    }

    /**
     * Every request's prompt sets in shared batches, one wait at the end ({@link CudaMaskDecoder#decodeWave}).
     * The logits stay on the device until the next call: post-processing reads them in place, and an output's
     * {@link DecoderOutput#lowResLogits} brings the wave's logits over (one copy) when asked before then.
     */
    @Override
    public List<List<DecoderOutput>> decodeWave(List<DecodeRequest> requests) {
        ensureOpen();
        if (gpuDecoder != null) {
            for (DecodeRequest r : requests) {
                if (r.embedding() instanceof EmbeddingRing.Slot slot && !slot.belongsTo(ring)) {
                    throw new IllegalArgumentException("an embedding of another CUDA backend's ring: " + slot);
                }
            }
            return gpuDecoder.decodeWave(requests);
        }
        if (decoder == null) {
            throw new IllegalStateException("this CUDA backend was built from weights without a mask decoder");
        }
        List<List<DecoderOutput>> out = new ArrayList<>(requests.size());
        for (DecodeRequest r : requests) {
            out.add(decoder.decodeBatch(r.embedding().toTensor(), r.prompts(), r.multimask()));
        }
        return out;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the CUDA backend is closed");
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            stream.synchronize();
        } catch (RuntimeException ignored) {
            // a failed kernel: release everything anyway
        }
        synchronized (imageOpsLock) {
            closeAll(maskPostprocessor, framePreprocessor);
        }
        closeAll(graphs.values().toArray(new AutoCloseable[0]));
        graphs.clear();
        closeAll(gpuDecoder, decoder, outPinned, inPinned, pool, stream, ring, kernels);
        context.close();
    }

    private static void closeAll(AutoCloseable... resources) {
        for (AutoCloseable r : resources) {
            if (r != null) {
                try {
                    r.close();
                } catch (Exception ex) {
                    log.warn("closing {}: {}", r.getClass().getSimpleName(), ex.toString());
                }
            }
        }
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "CudaSamBackend[%s, max batch %d]", config.describe(), maxBatch);
    }
}
