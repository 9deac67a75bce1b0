package io.samstream.gpu.cuda.sam;

import static io.samstream.gpu.cuda.kernels.WeightLayouts.convTransposeRows;
import static io.samstream.gpu.cuda.kernels.WeightLayouts.expandBias;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.DeviceWeights.Dense;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend.DecodeRequest;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.gpu.cuda.kernels.DecoderKernels;
import io.samstream.gpu.cuda.kernels.EncoderOpsKernels;
import io.samstream.gpu.cuda.kernels.GemmKernels;
import io.samstream.gpu.cuda.blocks.CudaTwoWayTransformer;
import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.Cuda;
import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaEvent;
import io.samstream.gpu.cuda.CudaException;
import io.samstream.gpu.cuda.CudaGraph;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.StepProfiler;

/**
 * SAM's prompt encoder and mask decoder on the GPU, batched over the prompt sets of one image, on its own
 * CUDA stream, device memory and lock (so that it runs while another thread runs the image encoder).
 *
 * <p><b>Precision.</b> The image side — the keys {@code [P, E*E, C]} (embedding + dense prompt, updated by
 * each image-to-token attention), their projections, the two transposed convolutions of the upscaler — is
 * bf16 storage with fp32 accumulation, through the encoder's bf16 GEMM and LayerNorm: that is where the
 * work is. The token side (a few rows per set: queries, the MLPs, hypernetworks, IoU head) and all
 * softmaxes are fp32 (small kernels in {@code decoder_ops.cuh}); mask logits are accumulated and returned
 * in fp32.
 *
 * <p><b>Batching.</b> {@link #decodeWave} takes the prompt sets of several images (the engine's wave: the
 * k-th frame of every stream in a micro-batch). Sets with the same output mode and number of sparse tokens
 * run as one batch of up to {@code maxSets} sets from up to {@value #MAX_IMAGES} images (sets with
 * different counts cannot share the attention shapes); more are chunked. Each batch: its images' embeddings
 * into the decoder's fp32 image buffer (a ring slot is read in place after its encoder event: one
 * layout kernel; a host tensor is uploaded), points / boxes / masks uploaded → prompt tokens, keys (per
 * image) → two-way transformer ({@link CudaTwoWayTransformer}, transformer.py) → upscaler → hypernetworks, mask
 * logits, IoU head →
 * the IoU predictions downloaded, the logits kept on the device for the wave ({@code KeptLogits}: post-processing
 * reads them in place; the host gets them only when it asks). The whole wave waits once, at the end.
 *
 * <p><b>Launches.</b> A batch is ~80 small kernels; launched one by one from Java their host cost exceeds
 * their GPU time at a few sets. So each batch shape (sets, sparse tokens, multimask, any mask input) is
 * captured once into a CUDA graph ({@link CudaGraph}, thread-local capture: the encoder's thread is not
 * disturbed) and replayed with one launch; the {@value #MAX_GRAPHS} most recently used shapes are kept.
 * If capture fails the decoder logs it and launches kernel by kernel.
 *
 * <p><b>Memory.</b> One device pool and two pinned buffers sized at construction for {@code maxSets} sets
 * of at most {@link #MAX_SPARSE} sparse tokens; a decode allocates nothing. For vit_b at 64 sets: about
 * 0.6 GB of device memory, 70 MB pinned.
 */
public final class CudaMaskDecoder implements AutoCloseable {
    /** Sparse tokens (points + padding point + 2 box corners) one prompt set may have. */
    public static final int MAX_SPARSE = 64;
    /** Images whose prompt sets one batch may mix (the decoder keeps their fp32 embeddings, 4 MB each for SAM). */
    public static final int MAX_IMAGES = 16;
    private static final float LN2D_EPS = 1e-6f;

    private final SamConfig config;
    private final int maxSets;
    private final int c, e, t, l, internal, mlp, mt, mi, iouHidden, iouDepth, co1, co2;
    private final CudaContext context;
    private final GemmKernels gemm;
    private final EncoderOpsKernels encoderOps;
    private final DecoderKernels dk;
    private final CudaStream stream;
    private final DeviceMemoryPool pool;
    private final PinnedBuffer embIn;
    private PinnedBuffer in, out;
    /** The last wave's logits, kept on the device ({@link WaveLogits}), and their host staging; grown when needed. */
    private DeviceMemoryPool waveLogits;
    private PinnedBuffer waveLogitsHost;
    /** Counts {@link #decodeWave} calls: a wave's kept logits are valid while it is the current one. */
    private long generation;
    private final CudaEvent gpuStart, gpuEnd;
    private final long poolBytes;

    // weights
    private final PromptEncoder promptEncoder;
    private final CudaTwoWayTransformer transformer;
    private final OutputHeads outputHeads;
    // inputs and activations (maxSets)
    private final DeviceBuffer emb, masksIn, maskSlot, coords, codes;
    private final DeviceBuffer tokens, queries, qtmp, qp, kp, vp, attnTok, hidden, hA, hB, hyperOut, iouOut;
    private final DeviceBuffer keys, keysPe, wide, masksOut;
    /** The buffers {@link #transformer} works in (some of the above). */
    private final CudaTwoWayTransformer.Workspace workspace;
    private float lastGpuMillis = Float.NaN;
    private double lastUnpackMillis = Double.NaN;
    private boolean closed;
    /** Captured decoder graphs by batch shape, least recently used first (evicted beyond MAX_GRAPHS). */
    private final LinkedHashMap<GraphKey, CudaGraph> graphs = new LinkedHashMap<>(16, 0.75f, true);
    private boolean graphsEnabled;
    private StepProfiler profiler;

    /** Graphs kept: batch shapes repeat (tracking: the same few object counts frame after frame). */
    static final int MAX_GRAPHS = 32;

    private record GraphKey(List<Integer> perImage, int ns, boolean multimask, boolean masks) {}

    /**
     * Meta's {@code PromptEncoder}: the Fourier features' Gaussian matrix, the point / not-a-point / no-mask
     * embeddings, the mask downscaler, and the dense positional embedding of the image grid (made once, bf16).
     */
    private record PromptEncoder(DeviceBuffer gauss, DeviceBuffer pointEmbed, DeviceBuffer notAPoint,
                                 DeviceBuffer noMask, DecoderKernels.MaskDownscaler downscaler, DeviceBuffer densePe) {}

    /**
     * What Meta's {@code MaskDecoder} has around the transformer: the IoU and mask tokens, the upscaler (two
     * transposed convolutions as tap-major GEMM rows, bf16), one hypernetwork MLP per mask token and the IoU head.
     */
    private record OutputHeads(DeviceBuffer outTokens, DeviceBuffer up1W, DeviceBuffer up1B, DeviceBuffer upNormG,
                               DeviceBuffer upNormB, DeviceBuffer up2W, DeviceBuffer up2B, Dense[][] hyper,
                               Dense[] iouHead) {}

    /** Why the decoder kernels cannot run this model's decoder, or null. */
    public static String unsupported(SamConfig c) {
        int dim = c.promptDim();
        List<String> problems = new ArrayList<>();
        if (dim % 32 != 0 || dim / 8 > DecoderKernels.MAX_UPSCALE2) {
            problems.add("prompt dim " + dim + " (kernels: a multiple of 32 up to " + 8 * DecoderKernels.MAX_UPSCALE2
                    + ")");
        }
        int internal = dim / Math.max(1, c.attentionDownsample());
        if (c.attentionDownsample() < 1 || dim % c.attentionDownsample() != 0 || internal % 8 != 0) {
            problems.add("cross-attention width " + dim + "/" + c.attentionDownsample() + " (must be a multiple of 8)");
        }
        if (c.decoderHeads() < 1 || dim % c.decoderHeads() != 0 || internal % c.decoderHeads() != 0
                || DecoderKernels.hdBound(dim / c.decoderHeads()) < 0) {
            problems.add("decoder heads " + c.decoderHeads() + " (head dims up to 64)");
        }
        if (c.maskInChans() % 4 != 0 || c.maskInChans() > DecoderKernels.MAX_MASK_IN_CHANS) {
            problems.add("mask_in_chans " + c.maskInChans() + " (a multiple of 4 up to 64)");
        }
        return problems.isEmpty() ? null : String.join("; ", problems);
    }

    /**
     * Uploads the decoder's weights and sizes its memory for {@code maxSets} prompt sets per batch.
     *
     * @throws IllegalArgumentException when the decoder's shape is not supported or maxSets < 1
     */
    public CudaMaskDecoder(StateDict sd, SamConfig config, CudaContext context, CudaKernels kernels, int maxSets) {
        this(sd, config, context, kernels, maxSets, true);
    }

    /**
     * As above; {@code graphs} ({@code samstream.cuda.decoder-graphs}) replays a captured CUDA graph per batch shape,
     * else every batch launches its kernels one by one.
     */
    public CudaMaskDecoder(StateDict sd, SamConfig config, CudaContext context, CudaKernels kernels, int maxSets,
                           boolean graphs) {
        String why = unsupported(config);
        if (why != null) {
            throw new IllegalArgumentException("the CUDA mask decoder cannot run " + config.describe() + ": " + why);
        }
        if (maxSets < 1) {
            throw new IllegalArgumentException("max prompt sets per batch must be at least 1, got " + maxSets);
        }
        this.config = config;
        this.maxSets = maxSets;
        this.graphsEnabled = graphs;
        this.c = config.promptDim();
        this.e = config.embeddingSize();
        this.t = e * e;
        this.l = config.lowResSize();
        this.internal = c / config.attentionDownsample();
        this.mlp = config.decoderMlpDim();
        this.mt = config.numMultimaskOutputs() + 1;
        this.mi = config.maskInChans();
        this.iouHidden = config.iouHeadHiddenDim();
        this.iouDepth = config.iouHeadDepth();
        this.co1 = c / 4;
        this.co2 = c / 8;
        this.context = context;
        this.gemm = GemmKernels.of(kernels);
        this.encoderOps = EncoderOpsKernels.of(kernels);

        Sizes z = Sizes.of(config, maxSets);
        long s = maxSets, rowsTok = z.rowsTok(), imgElems = z.imgElems(), wideElems = z.wideElems();
        long outMasks = z.outMasks();
        long[] act = z.act();
        this.poolBytes = z.poolBytes();
        long embBytes = Math.max((long) c * t * 4, 4L << 20);
        long inBytes = Chunk.inBytes(maxSets, MAX_SPARSE, maxSets, l);
        long outBytes = Chunk.outBytes(maxSets, mt);

        CudaStream st = null;
        DeviceMemoryPool pl = null;
        PinnedBuffer pemb = null, pin = null, pout = null;
        CudaEvent ev0 = null, ev1 = null;
        try {
            this.dk = new DecoderKernels(kernels);
            st = new CudaStream(context);
            pl = new DeviceMemoryPool(context, poolBytes);
            pemb = new PinnedBuffer(context, embBytes, "mask decoder embedding input");
            pin = new PinnedBuffer(context, inBytes, "mask decoder input");
            pout = new PinnedBuffer(context, outBytes, "mask decoder output");
            ev0 = new CudaEvent(context, true);
            ev1 = new CudaEvent(context, true);
        } catch (RuntimeException | Error ex) {
            closeQuietly(ev1, ev0, pout, pin, pemb, pl, st);
            throw ex;
        }
        this.stream = st;
        this.pool = pl;
        this.embIn = pemb;
        this.in = pin;
        this.out = pout;
        this.gpuStart = ev0;
        this.gpuEnd = ev1;
        try {
            DeviceWeights w = new DeviceWeights(pool, stream, embIn);
            promptEncoder = loadPromptEncoder(w, sd);
            outputHeads = loadOutputHeads(w, sd);
            transformer = new CudaTwoWayTransformer(w, sd, "mask_decoder.transformer.",
                    CudaTwoWayTransformer.Shape.of(config), CudaTwoWayTransformer.SAM_MLP, kernels, dk);
            emb = pool.allocate(act[0], "embeddings (fp32, channels-first)");
            masksIn = pool.allocate(act[1], "mask inputs");
            maskSlot = pool.allocate(act[2], "mask slots");
            coords = pool.allocate(act[3], "sparse coords");
            codes = pool.allocate(act[4], "sparse codes");
            long tokBytes = rowsTok * c * 4;
            tokens = pool.allocate(tokBytes, "tokens");
            queries = pool.allocate(tokBytes, "queries");
            qtmp = pool.allocate(tokBytes, "queries + pe");
            qp = pool.allocate(tokBytes, "token q");
            kp = pool.allocate(tokBytes, "token k");
            vp = pool.allocate(tokBytes, "token v");
            attnTok = pool.allocate(rowsTok * c * 4, "token attention out");
            hidden = pool.allocate(act[6], "token mlp hidden");
            hA = pool.allocate(s * Math.max(c, iouHidden) * 4, "head hidden a");
            hB = pool.allocate(s * Math.max(c, iouHidden) * 4, "head hidden b");
            hyperOut = pool.allocate(act[8], "hypernetwork outputs");
            iouOut = pool.allocate(act[9], "iou predictions");
            keys = pool.allocateBf16(imgElems, "keys");
            keysPe = pool.allocateBf16(imgElems, "keys + pe / upscaled");
            wide = pool.allocateBf16(wideElems, "image projections / upscaler rows");
            masksOut = pool.allocate(outMasks * 4, "mask logits");
            workspace = new CudaTwoWayTransformer.Workspace(queries, tokens, qtmp, qp, kp, vp, attnTok, hidden, keys,
                    keysPe, wide, promptEncoder.densePe());
            stream.synchronize();
        } catch (RuntimeException | Error ex) {
            close();
            throw ex;
        }
    }

    private PromptEncoder loadPromptEncoder(DeviceWeights w, StateDict sd) {
        String p = "prompt_encoder.";
        DeviceBuffer gauss = w.f32(sd.get(p + "pe_layer.positional_encoding_gaussian_matrix", 2, c / 2).data(),
                "pe gaussian");
        float[] pts = new float[4 * c];
        for (int i = 0; i < 4; i++) {
            System.arraycopy(sd.get(p + "point_embeddings." + i + ".weight", 1, c).data(), 0, pts, i * c, c);
        }
        DeviceBuffer pointEmbed = w.f32(pts, "point_embeddings");
        DeviceBuffer notAPoint = w.f32(sd.get(p + "not_a_point_embed.weight", 1, c).data(), "not_a_point_embed");
        DeviceBuffer noMask = w.f32(sd.get(p + "no_mask_embed.weight", 1, c).data(), "no_mask_embed");
        String md = p + "mask_downscaling.";
        DecoderKernels.MaskDownscaler downscaler = new DecoderKernels.MaskDownscaler(
                w.f32(sd.get(md + "0.weight", mi / 4, 1, 2, 2).data(), md + "0.weight"),
                w.f32(sd.get(md + "0.bias", mi / 4).data(), md + "0.bias"),
                w.f32(sd.get(md + "1.weight", mi / 4).data(), md + "1.weight"),
                w.f32(sd.get(md + "1.bias", mi / 4).data(), md + "1.bias"),
                w.f32(sd.get(md + "3.weight", mi, mi / 4, 2, 2).data(), md + "3.weight"),
                w.f32(sd.get(md + "3.bias", mi).data(), md + "3.bias"),
                w.f32(sd.get(md + "4.weight", mi).data(), md + "4.weight"),
                w.f32(sd.get(md + "4.bias", mi).data(), md + "4.bias"),
                w.f32(sd.get(md + "6.weight", c, mi, 1, 1).data(), md + "6.weight"),
                w.f32(sd.get(md + "6.bias", c).data(), md + "6.bias"));
        DeviceBuffer densePe = pool.allocateBf16((long) t * c, "dense pe");
        dk.densePe(stream, gauss, densePe, e, c);
        return new PromptEncoder(gauss, pointEmbed, notAPoint, noMask, downscaler, densePe);
    }

    private OutputHeads loadOutputHeads(DeviceWeights w, StateDict sd) {
        String d = "mask_decoder.";
        float[] ot = new float[(1 + mt) * c];
        System.arraycopy(sd.get(d + "iou_token.weight", 1, c).data(), 0, ot, 0, c);
        System.arraycopy(sd.get(d + "mask_tokens.weight", mt, c).data(), 0, ot, c, mt * c);
        DeviceBuffer outTokens = w.f32(ot, "output tokens");
        DeviceBuffer up1W = w.bf16(convTransposeRows(sd.get(d + "output_upscaling.0.weight", c, co1, 2, 2).data(), c,
                co1), "output_upscaling.0.weight");
        DeviceBuffer up1B = w.bf16(expandBias(sd.get(d + "output_upscaling.0.bias", co1).data()),
                "output_upscaling.0.bias");
        DeviceBuffer upNormG = w.bf16(sd.get(d + "output_upscaling.1.weight", co1).data(), "output_upscaling.1.weight");
        DeviceBuffer upNormB = w.bf16(sd.get(d + "output_upscaling.1.bias", co1).data(), "output_upscaling.1.bias");
        DeviceBuffer up2W = w.bf16(convTransposeRows(sd.get(d + "output_upscaling.3.weight", co1, co2, 2, 2).data(),
                co1, co2), "output_upscaling.3.weight");
        DeviceBuffer up2B = w.bf16(expandBias(sd.get(d + "output_upscaling.3.bias", co2).data()),
                "output_upscaling.3.bias");
        Dense[][] hyper = new Dense[mt][];
        for (int i = 0; i < mt; i++) {
            hyper[i] = w.mlp(sd, d + "output_hypernetworks_mlps." + i, c, c, co2, 3);
        }
        Dense[] iouHead = w.mlp(sd, d + "iou_prediction_head", c, iouHidden, mt, iouDepth);
        return new OutputHeads(outTokens, up1W, up1B, upNormG, upNormB, up2W, up2B, hyper, iouHead);
    }

    /**
     * The device memory of {@code maxSets} prompt sets: token rows (sets x (1 + mask tokens + {@link #MAX_SPARSE})),
     * image elements and the wide buffer's, the mask logits, and the activation buffers' bytes in allocation order.
     */
    private record Sizes(long rowsTok, long imgElems, long wideElems, long outMasks, long[] act, long poolBytes) {
        static Sizes of(SamConfig config, int maxSets) {
            int c = config.promptDim(), e = config.embeddingSize(), t = e * e, l = config.lowResSize();
            int internal = c / config.attentionDownsample(), mlp = config.decoderMlpDim();
            int mt = config.numMultimaskOutputs() + 1, iouHidden = config.iouHeadHiddenDim(), co2 = c / 8;
            int nqMax = 1 + mt + MAX_SPARSE;
            long s = maxSets;
            long rowsTok = s * nqMax;
            long imgElems = s * t * c;
            long wideElems = s * t * Math.max(3L * internal, 2L * c);
            long outMasks = s * Math.max(1, mt - 1) * l * l;
            long[] act = {MAX_IMAGES * c * (long) t * 4, s * l * l * 4, s * 4, s * MAX_SPARSE * 8, s * MAX_SPARSE * 4,
                    rowsTok * c * 4 * 7, rowsTok * Math.max(mlp, c) * 4, 2 * s * Math.max(c, iouHidden) * 4,
                    (long) mt * s * co2 * 4, s * mt * 4, imgElems * 2 * 2, wideElems * 2, outMasks * 4};
            long total = 64L * 256;   // alignment of the buffers allocated from one entry below
            for (long a : act) {
                total += BumpAllocator.alignUp(Math.max(a, 1));
            }
            return new Sizes(rowsTok, imgElems, wideElems, outMasks, act, total + weightBytesBound(config));
        }
    }

    /** An upper bound of the weight bytes (each tensor 256-aligned, fp32). */
    private static long weightBytesBound(SamConfig c) {
        long dim = c.promptDim(), e = c.embeddingSize(), mlp = c.decoderMlpDim(), h = c.iouHeadHiddenDim();
        long perLayer = 16 * dim * dim + 2 * dim * mlp + 64 * dim + mlp;
        long w = c.decoderDepth() * perLayer + 8 * dim * dim + e * e * dim + 16 * dim * dim
                + (c.numMultimaskOutputs() + 1) * (3 * dim * dim) + 3 * h * h + 4 * h * dim
                + 4 * c.maskInChans() * c.maskInChans() + 2 * dim * c.maskInChans() + 64 * dim;
        return w * 4 + 512L * 256;
    }

    // ------------------------------------------------------------------------------------------------

    public int maxSets() {
        return maxSets;
    }

    public long poolBytes() {
        return pool.capacity();
    }

    /**
     * Whether batches replay captured CUDA graphs (as made: {@code samstream.cuda.decoder-graphs}) or launch their
     * ~80 kernels one by one. For tests and benchmarks.
     */
    public synchronized void useGraphs(boolean on) {
        graphsEnabled = on;
    }

    /** Host milliseconds the last batch took to copy its outputs from pinned memory into Java arrays. */
    public synchronized double lastUnpackMillis() {
        return lastUnpackMillis;
    }

    /** GPU milliseconds of the last batch (after its uploads, before its download), from two events. */
    public synchronized float lastGpuMillis() {
        return lastGpuMillis;
    }

    /**
     * Decodes several prompt sets of one image.
     *
     * @param embedding the image embedding {@code [1, C, E, E]} (host, fp32)
     * @return one output per prompt set, in order
     */
    public List<DecoderOutput> decode(Tensor embedding, List<Prompt> prompts, boolean multimask) {
        List<DecoderOutput> out = decodeWave(List.of(new DecodeRequest(ImageEmbedding.of(embedding), prompts, multimask)))
                .get(0);
        out.forEach(DecoderOutput::lowResLogits);
        return out;
    }

    /** One batch of a wave: sets of one output mode and sparse-token count, from up to {@value #MAX_IMAGES} images. */
    private static final class Chunk {
        final boolean multimask;
        final int ns;
        /** (request, prompt) of each set, grouped by image in request order. */
        final List<int[]> sets = new ArrayList<>();
        /** The request of each image, and how many of the sets are its. */
        final List<Integer> images = new ArrayList<>();
        final List<Integer> perImage = new ArrayList<>();
        long inAt, outAt, logitsAt;
        int withMask;

        Chunk(boolean multimask, int ns) {
            this.multimask = multimask;
            this.ns = ns;
        }

        /** Pinned input bytes: coords, codes, mask slots, mask planes, each 256-aligned. */
        static long inBytes(int sets, int ns, int withMask, int l) {
            return BumpAllocator.alignUp((long) sets * ns * 8) + BumpAllocator.alignUp((long) sets * ns * 4)
                    + BumpAllocator.alignUp(sets * 4L) + BumpAllocator.alignUp((long) withMask * l * l * 4);
        }

        /** Pinned output bytes: the IoU predictions (the logits stay on the device). */
        static long outBytes(int sets, int mt) {
            return BumpAllocator.alignUp((long) sets * mt * 4);
        }

        /** Device bytes of the chunk's kept logits. */
        static long logitBytes(int sets, int count, int l) {
            return BumpAllocator.alignUp((long) sets * count * l * l * 4);
        }
    }

    /**
     * Decodes the prompt sets of several images together: the sets of all requests are batched by output
     * mode and sparse-token count (see the class doc), every batch is queued, and the call waits once.
     * Ring slots ({@link EmbeddingRing.Slot}) are read after their encoder event; other embeddings are host
     * tensors {@code [1, C, E, E]} and are uploaded.
     *
     * @return per request, one output per prompt set, in order
     */
    public synchronized List<List<DecoderOutput>> decodeWave(List<DecodeRequest> requests) {
        if (closed) {
            throw new IllegalStateException("the CUDA mask decoder is closed");
        }
        Map<List<Object>, List<Chunk>> groups = new LinkedHashMap<>();
        for (int r = 0; r < requests.size(); r++) {
            DecodeRequest req = requests.get(r);
            if (!(req.embedding() instanceof EmbeddingRing.Slot)) {
                Tensor emb = req.embedding().toTensor();
                if (!emb.hasShape(1, c, e, e)) {
                    throw new IllegalArgumentException("embedding must be [1, " + c + ", " + e + ", " + e + "], got "
                            + emb.shapeString());
                }
            }
            for (int j = 0; j < req.prompts().size(); j++) {
                Prompt p = req.prompts().get(j);
                String which = "prompt set " + j + (requests.size() > 1 ? " of image " + r : "");
                if (p == null) {
                    throw new IllegalArgumentException(which + " is null");
                }
                int ns = sparseCount(p);
                if (ns > MAX_SPARSE) {
                    throw new IllegalArgumentException(which + " has " + ns + " sparse tokens (points, padding, box "
                            + "corners); the CUDA mask decoder takes at most " + MAX_SPARSE);
                }
                if (p.maskInput() != null && !p.maskInput().hasShape(1, l, l)) {
                    throw new IllegalArgumentException("mask input of " + which + " must be [1, " + l + ", " + l
                            + "], got " + p.maskInput().shapeString());
                }
                List<Chunk> chunks = groups.computeIfAbsent(List.of(req.multimask(), ns), k -> new ArrayList<>());
                Chunk ch = chunks.isEmpty() ? null : chunks.get(chunks.size() - 1);
                boolean newImage = ch == null || ch.images.get(ch.images.size() - 1) != r;
                if (ch == null || ch.sets.size() == maxSets || (newImage && ch.images.size() == MAX_IMAGES)) {
                    ch = new Chunk(req.multimask(), ns);
                    chunks.add(ch);
                    newImage = true;
                }
                if (newImage) {
                    ch.images.add(r);
                    ch.perImage.add(0);
                }
                ch.perImage.set(ch.perImage.size() - 1, ch.perImage.get(ch.perImage.size() - 1) + 1);
                ch.sets.add(new int[] {r, j});
                if (p.maskInput() != null) {
                    ch.withMask++;
                }
            }
        }
        List<DecoderOutput[]> results = new ArrayList<>(requests.size());
        for (DecodeRequest req : requests) {
            results.add(new DecoderOutput[req.prompts().size()]);
        }
        List<Chunk> chunks = new ArrayList<>();
        groups.values().forEach(chunks::addAll);
        if (!chunks.isEmpty()) {
            long inBytes = 0;
            long outBytes = 0;
            long logitBytes = 0;
            for (Chunk ch : chunks) {
                ch.inAt = inBytes;
                ch.outAt = outBytes;
                ch.logitsAt = logitBytes;
                inBytes += Chunk.inBytes(ch.sets.size(), ch.ns, ch.withMask, l);
                outBytes += Chunk.outBytes(ch.sets.size(), mt);
                logitBytes += Chunk.logitBytes(ch.sets.size(), ch.multimask ? mt - 1 : 1, l);
            }
            // The stream is idle between calls (each ends with a wait): staging can grow here.
            in = grown(in, inBytes, "mask decoder input");
            out = grown(out, outBytes, "mask decoder output");
            if (waveLogits == null || waveLogits.capacity() < logitBytes) {
                if (waveLogits != null) {
                    waveLogits.close();
                }
                waveLogits = null;
                waveLogits = new DeviceMemoryPool(context, logitBytes / 4 * 5 + 256);
            }
            generation++;
            WaveLogits wave = new WaveLogits(generation, logitBytes);
            stream.record(gpuStart);
            boolean hostUploadPending = false;
            for (Chunk ch : chunks) {
                hostUploadPending = stageImages(requests, ch, hostUploadPending);
                runChunk(requests, ch);
            }
            stream.record(gpuEnd);
            stream.synchronize();
            lastGpuMillis = CudaEvent.elapsedMillis(gpuStart, gpuEnd);
            if (profiler != null) {
                profiler.collect();
            }
            long unpack0 = System.nanoTime();
            for (Chunk ch : chunks) {
                unpack(ch, wave, results);
            }
            lastUnpackMillis = (System.nanoTime() - unpack0) / 1e6;
        }
        List<List<DecoderOutput>> all = new ArrayList<>(results.size());
        for (DecoderOutput[] r : results) {
            all.add(Arrays.asList(r));
        }
        return all;
    }

    private PinnedBuffer grown(PinnedBuffer current, long bytes, String what) {
        if (current.bytes() >= bytes) {
            return current;
        }
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(what + ": a wave needs " + Cuda.bytes(bytes) + " of staging, more than "
                    + "one pinned buffer holds (2 GiB): decode fewer prompt sets at once");
        }
        current.close();
        return new PinnedBuffer(context, Math.min(Integer.MAX_VALUE, bytes / 4 * 5), what);
    }

    /**
     * Puts the chunk's images into the fp32 image buffer: a ring slot after its encoder event (one layout
     * kernel), a host tensor through the pinned embedding buffer (waiting first for an earlier such upload).
     *
     * @return whether a host upload is now queued
     */
    private boolean stageImages(List<DecodeRequest> requests, Chunk ch, boolean hostUploadPending) {
        long bytes = (long) c * t * 4;
        for (int i = 0; i < ch.images.size(); i++) {
            ImageEmbedding embedding = requests.get(ch.images.get(i)).embedding();
            DeviceBuffer dst = emb.slice(i * bytes, bytes, "embedding " + i);
            if (embedding instanceof EmbeddingRing.Slot slot) {
                stream.waitFor(slot.ready());
                encoderOps.tokensToChw(stream, slot.buffer(), dst, 1, t, c);
            } else {
                if (hostUploadPending) {
                    stream.synchronize();
                }
                embIn.buffer().asFloatBuffer().put(embedding.toTensor().data(), 0, c * t);
                stream.upload(embIn, 0, dst, 0, bytes);
                hostUploadPending = true;
            }
        }
        return hostUploadPending;
    }

    /** Number of sparse tokens of a prompt set, as the reference's prompt encoder makes them. */
    static int sparseCount(Prompt p) {
        int n = 0;
        if (p.points() != null) {
            n += p.pointCount() + (p.hasBox() ? 0 : 1);
        }
        return n + (p.hasBox() ? 2 : 0);
    }

    /** Stages, uploads, runs (graph or launches) and queues the download of one chunk. */
    private void runChunk(List<DecodeRequest> requests, Chunk ch) {
        int sets = ch.sets.size();
        int ns = ch.ns;
        long coordsAt = ch.inAt;
        long codesAt = coordsAt + BumpAllocator.alignUp((long) sets * ns * 8);
        long slotsAt = codesAt + BumpAllocator.alignUp((long) sets * ns * 4);
        long masksAt = slotsAt + BumpAllocator.alignUp(sets * 4L);
        ByteBuffer buf = in.buffer();
        FloatBuffer cf = at(buf, coordsAt).asFloatBuffer();
        java.nio.IntBuffer ci = at(buf, codesAt).asIntBuffer();
        java.nio.IntBuffer si = at(buf, slotsAt).asIntBuffer();
        FloatBuffer mf = at(buf, masksAt).asFloatBuffer();
        float size = config.imageSize();
        int withMask = 0;
        for (int[] rj : ch.sets) {
            Prompt p = requests.get(rj[0]).prompts().get(rj[1]);
            if (p.points() != null) {
                float[][] pts = p.points();
                int[] labels = p.labels();
                for (int i = 0; i < pts.length; i++) {
                    cf.put((pts[i][0] + 0.5f) / size).put((pts[i][1] + 0.5f) / size);
                    int lab = labels[i];
                    ci.put(lab == -1 || lab == 0 || lab == 1 ? lab : 4);
                }
                if (!p.hasBox()) {
                    cf.put(0f).put(0f);
                    ci.put(-1);
                }
            }
            if (p.hasBox()) {
                float[] b = p.box();
                cf.put((b[0] + 0.5f) / size).put((b[1] + 0.5f) / size).put((b[2] + 0.5f) / size)
                        .put((b[3] + 0.5f) / size);
                ci.put(2).put(3);
            }
            if (p.maskInput() != null) {
                mf.put(p.maskInput().data(), 0, l * l);
                si.put(withMask++);
            } else {
                si.put(-1);
            }
        }
        if (ns > 0) {
            stream.upload(in, coordsAt, coords, 0, (long) sets * ns * 8);
            stream.upload(in, codesAt, codes, 0, (long) sets * ns * 4);
        }
        stream.upload(in, slotsAt, maskSlot, 0, (long) sets * 4);
        if (withMask > 0) {
            stream.upload(in, masksAt, masksIn, 0, (long) withMask * l * l * 4);
        }
        int first = ch.multimask ? 1 : 0, count = ch.multimask ? mt - 1 : 1;
        boolean masks = withMask > 0;
        int[] perImage = ch.perImage.stream().mapToInt(Integer::intValue).toArray();
        if (profiler != null) {
            profiler.begin();
            enqueue(perImage, ns, first, count, masks);
        } else if (graphsEnabled) {
            GraphKey key = new GraphKey(List.copyOf(ch.perImage), ns, ch.multimask, masks);
            CudaGraph g = graphs.get(key);
            if (g == null) {
                g = captureOrNull(key, perImage, first, count);
            }
            if (g != null) {
                g.launch(stream);
            } else {
                enqueue(perImage, ns, first, count, masks);
            }
        } else {
            enqueue(perImage, ns, first, count, masks);
        }
        long maskBytes = (long) sets * count * l * l * 4;
        stream.copy(masksOut, waveLogits.whole().slice(ch.logitsAt, maskBytes, "kept mask logits"), maskBytes);
        stream.download(iouOut, 0, out, ch.outAt, (long) sets * mt * 4);
    }

    private static ByteBuffer at(ByteBuffer buf, long offset) {
        return ((ByteBuffer) buf.duplicate().position((int) offset)).slice().order(java.nio.ByteOrder.LITTLE_ENDIAN);
    }

    /** After the wait: the chunk's IoU predictions into its sets' outputs, whose logits stay on the device. */
    private void unpack(Chunk ch, WaveLogits wave, List<DecoderOutput[]> results) {
        int sets = ch.sets.size();
        int first = ch.multimask ? 1 : 0, count = ch.multimask ? mt - 1 : 1;
        FloatBuffer iouF = at(out.buffer(), ch.outAt).asFloatBuffer();
        for (int j = 0; j < sets; j++) {
            float[] iou = new float[count];
            for (int k = 0; k < count; k++) {
                iou[k] = iouF.get(j * mt + first + k);
            }
            int[] rj = ch.sets.get(j);
            long at = ch.logitsAt + (long) j * count * l * l * 4;
            results.get(rj[0])[rj[1]] = new DecoderOutput(new KeptLogits(wave, at, count), l, iou);
        }
    }

    /** One {@link #decodeWave}'s logits on the device (valid until the next call), brought over on request. */
    private final class WaveLogits {
        final long generation;
        final long bytes;
        /** Whether {@link #waveLogitsHost} holds this wave's logits. */
        boolean onHost;

        WaveLogits(long generation, long bytes) {
            this.generation = generation;
            this.bytes = bytes;
        }

        /** The caller holds the decoder's lock. */
        void checkCurrent() {
            if (closed) {
                throw new IllegalStateException("the CUDA mask decoder is closed");
            }
            if (generation != CudaMaskDecoder.this.generation) {
                throw new IllegalStateException("the mask logits of decoder call " + generation + " were overwritten by call "
                        + CudaMaskDecoder.this.generation + ": read an output's logits before the backend decodes again");
            }
        }
    }

    /**
     * One output's {@code [count, L, L]} logits in a wave's device buffer. {@link #download} brings the whole
     * wave over once (one copy) and hands out this output's part; {@link #withDevice} lends the device planes.
     */
    final class KeptLogits implements DecoderOutput.Logits {
        private final WaveLogits wave;
        private final long at;
        private final int count;

        KeptLogits(WaveLogits wave, long at, int count) {
            this.wave = wave;
            this.at = at;
            this.count = count;
        }

        @Override
        public Tensor download() {
            synchronized (CudaMaskDecoder.this) {
                wave.checkCurrent();
                if (!wave.onHost) {
                    if (waveLogitsHost == null || waveLogitsHost.bytes() < wave.bytes) {
                        if (waveLogitsHost != null) {
                            waveLogitsHost.close();
                        }
                        waveLogitsHost = null;
                        waveLogitsHost = new PinnedBuffer(context, Math.min(Integer.MAX_VALUE, wave.bytes / 4 * 5 + 256),
                                "mask decoder logits");
                    }
                    stream.download(waveLogits.whole(), 0, waveLogitsHost, 0, wave.bytes);
                    stream.synchronize();
                    wave.onHost = true;
                }
                float[] m = new float[count * l * l];
                at(waveLogitsHost.buffer(), at).asFloatBuffer().get(m);
                return new Tensor(m, count, l, l);
            }
        }

        /** Side L of the planes. */
        int size() {
            return l;
        }

        /**
         * Runs {@code use} with plane {@code index}'s device logits while this wave is current (under the
         * decoder's lock, so no decode overwrites them meanwhile; {@code use} must finish reading them).
         */
        <T> T withDevice(int index, java.util.function.Function<DeviceBuffer, T> use) {
            synchronized (CudaMaskDecoder.this) {
                wave.checkCurrent();
                long plane = (long) l * l * 4;
                return use.apply(waveLogits.whole().slice(at + index * plane, plane, "mask logits plane " + index));
            }
        }

        /** Whether the logits are still on the device (no decode since). */
        boolean current() {
            synchronized (CudaMaskDecoder.this) {
                return !closed && wave.generation == generation;
            }
        }

        /** The decoder whose lock guards these logits. */
        Object owner() {
            return CudaMaskDecoder.this;
        }
    }

    /**
     * Queues the whole decoder for one batch (inputs already uploaded; {@code perImage[i]} sets read image i of
     * the fp32 image buffer, in order); captured into graphs as is.
     */
    private void enqueue(int[] perImage, int ns, int first, int count, boolean withMask) {
        int sets = Arrays.stream(perImage).sum();
        int nq = 1 + mt + ns;
        int rows = sets * nq;
        // Prompt encoder: tokens, keys = embedding + dense prompt (each set from its own image).
        PromptEncoder pe = promptEncoder;
        dk.promptTokens(stream, coords, codes, outputHeads.outTokens(), pe.gauss(), pe.pointEmbed(), pe.notAPoint(),
                tokens, sets, mt, ns, c);
        stream.copy(tokens, queries, (long) rows * c * 4);
        long imageBytes = (long) c * t * 4;
        long keyBytes = (long) t * c * 2;
        for (int i = 0, set = 0; i < perImage.length; set += perImage[i], i++) {
            DeviceBuffer image = emb.slice(i * imageBytes, imageBytes, "embedding " + i);
            DeviceBuffer imageKeys = keys.slice(set * keyBytes, perImage[i] * keyBytes, "keys of image " + i);
            dk.embedKeys(stream, image, pe.noMask(), imageKeys, perImage[i], t, c);
            if (withMask) {
                dk.maskKeys(stream, image, masksIn, maskSlot.slice(set * 4L, perImage[i] * 4L, "mask slots of image " + i),
                        pe.downscaler(), imageKeys, perImage[i], e, c, mi, LN2D_EPS);
            }
        }
        mark("prompt encoder, keys");

        // Two-way transformer: the tokens and the image attend to each other (queries, keys updated in place).
        transformer.forward(stream, workspace, sets, nq, profiler);

        // Upscaler: ConvT(C -> C/4) as a GEMM per pixel, scatter + LayerNorm2d + GELU, ConvT(C/4 -> C/8) + GELU.
        OutputHeads oh = outputHeads;
        long img = (long) sets * t;
        DeviceBuffer pp1 = wide.slice(0, img * c * 2, "upscale 1 rows");
        gemm.run(stream, keys, oh.up1W(), oh.up1B(), null, pp1, (int) img, 4 * co1, c, false);
        mark("upscale: gemm 1");
        DeviceBuffer up1 = keysPe.slice(0, 4 * img * co1 * 2, "upscaled 1");
        dk.upscaleLnGelu(stream, pp1, oh.upNormG(), oh.upNormB(), up1, sets, e, e, co1, LN2D_EPS, null, null);
        mark("upscale: scatter + layernorm + gelu");
        DeviceBuffer pp2 = wide.slice(0, 4 * img * co2 * 4 * 2, "upscale 2 rows");
        gemm.run(stream, up1, oh.up2W(), oh.up2B(), null, pp2, (int) (4 * img), 4 * co2, co1, true);
        mark("upscale: gemm 2 + gelu");

        // Hypernetworks of the needed mask tokens (outputs [mt, sets, C/8]), the mask logits, the IoU head.
        for (int tk = first; tk < first + count; tk++) {
            DeviceBuffer x = queries.slice((long) (1 + tk) * c * 4, ((long) (rows - 1 - tk)) * c * 4, "mask token rows");
            Dense[] h = oh.hyper()[tk];
            DeviceBuffer dst = hyperOut.slice((long) tk * sets * co2 * 4, (long) sets * co2 * 4, "hyper " + tk);
            dk.mlp(stream, h, x, nq * c, dst, sets, hA, hB);
        }
        mark("hypernetworks");
        dk.maskLogits(stream, pp2, hyperOut, masksOut, sets, e, co2, mt, first, count, null, null);
        mark("mask logits");
        dk.mlp(stream, oh.iouHead(), queries, nq * c, iouOut, sets, hA, hB);
        mark("iou head");
    }

    /**
     * Captures the decoder for one batch shape into a graph (kept for later batches of that shape), or returns
     * null and falls back to plain launches from then on when capture is not possible here.
     */
    private CudaGraph captureOrNull(GraphKey key, int[] perImage, int first, int count) {
        CudaGraph g;
        try {
            g = CudaGraph.capture(stream, () -> enqueue(perImage, key.ns(), first, count, key.masks()),
                    "the mask decoder for " + Arrays.stream(perImage).sum() + " prompt sets of " + perImage.length
                            + " image(s)");
        } catch (CudaException ex) {
            graphsEnabled = false;
            org.slf4j.LoggerFactory.getLogger(CudaMaskDecoder.class).warn(
                    "CUDA graph capture of the mask decoder failed, launching its kernels one by one: {}", ex.toString());
            return null;
        }
        graphs.put(key, g);
        if (graphs.size() > MAX_GRAPHS) {
            var eldest = graphs.entrySet().iterator().next();
            eldest.getValue().close();
            graphs.remove(eldest.getKey());
        }
        return g;
    }

    private void mark(String label) {
        if (profiler != null) {
            profiler.mark(label);
        }
    }

    /**
     * GPU milliseconds per step of the decoder, summed over steps of the same name (the layers) and averaged
     * over {@code iterations} calls of {@link #decode} on these prompts, from events between the launches
     * (no graph: kernels launched one by one).
     */
    public synchronized Map<String, Double> profile(Tensor embedding, List<Prompt> prompts, boolean multimask,
                                                    int iterations) {
        StepProfiler p = new StepProfiler(context, stream);
        profiler = p;
        try {
            for (int i = 0; i < iterations; i++) {
                decode(embedding, prompts, multimask);
            }
        } finally {
            profiler = null;
            p.close();
        }
        return p.averages(iterations);
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (stream != null) {
                stream.synchronize();
            }
        } catch (RuntimeException ignored) {
            // a failed kernel: release everything anyway
        }
        graphs.values().forEach(CudaGraph::close);
        graphs.clear();
        closeQuietly(gpuEnd, gpuStart, out, in, embIn, waveLogitsHost, waveLogits, pool, stream);
    }

    private static void closeQuietly(AutoCloseable... resources) {
        for (AutoCloseable r : resources) {
            if (r != null) {
                try {
                    r.close();
                } catch (Exception ignored) {
                    // closing what could be closed
                }
            }
        }
    }
}
