package io.samstream.gpu.cuda.sam;

import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.samstream.config.ModelPrecision;
import io.samstream.config.ModelSparsity;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuSamBackend;
import io.samstream.gpu.cuda.Cuda;
import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaEvent;
import io.samstream.gpu.cuda.CudaException;
import io.samstream.gpu.cuda.CudaGraph;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.StepProfiler;
import io.samstream.gpu.cuda.kernels.ImageOpsKernels;
import io.samstream.gpu.image.FrameImage;
import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.sparse.SparseEncoder;
import io.samstream.gpu.tensor.Tensor;

/**
 * SAM on a CUDA GPU: the {@link SamBackend} that wires the model's parts together, the way Meta's {@code Sam} does.
 * {@link CudaImageEncoder} (bf16 ViT, its weights and activations in one device pool sized when the backend is made,
 * for the largest batch {@code maxBatch}), {@link CudaMaskDecoder} (prompt encoder + mask decoder, its own stream,
 * pool and lock, so a decode runs while another thread encodes; decoders its kernels cannot run fall back to the CPU
 * fp32 one, {@link CpuSamBackend#decoderOnly}), the device {@link EmbeddingRing} the engine's embeddings live in, and
 * GPU pre- / post-processing ({@link GpuFramePreprocessor}, {@link GpuMaskPostprocessor}, made at first use).
 *
 * <p><b>CUDA graphs.</b> The forward pass of each batch size is captured into a CUDA graph the first time that size
 * runs and replayed after that: one launch instead of ~100, and no per-kernel launch gaps (what matters at batch 1).
 * One graph per batch size actually used (not padded up to a few captured sizes: the graphs are small, and padding
 * would cost up to 2x the compute); all of them name the same pool buffers, which never move.
 * {@code samstream.cuda.graphs = off} ({@code -Dsamstream.cuda.graphs=false}) runs every pass eagerly instead.
 *
 * <p><b>Benchmarks.</b> {@link #stageInput}, {@link #timeForward} and {@link #profileForward} time the encoder on
 * the GPU alone (events, no host copies).
 *
 * <p>Thread-safe: {@link #encode} calls are serialized (one stream, one set of activation buffers), decode
 * calls are serialized among themselves, independently of encode.
 * Inputs larger than {@code maxBatch} or of the wrong size are refused with an {@link IllegalArgumentException}
 * before anything is queued.
 */
public final class CudaSamBackend implements SamBackend {
    private static final Logger log = LoggerFactory.getLogger(CudaSamBackend.class);

    private final SamConfig config;
    private final int maxBatch;
    private final int s, e, tokens, neckC;
    private final CudaContext context;
    private final CudaKernels kernels;
    private final CudaStream stream;
    private final DeviceMemoryPool pool;
    private final PinnedBuffer inPinned, outPinned;
    private final CpuSamBackend decoder;
    private final CudaMaskDecoder gpuDecoder;
    private final EmbeddingRing ring;
    private final CudaImageEncoder encoder;
    private final long weightBytes, activationBytes;
    private volatile boolean closed;
    // GPU pre- and post-processing (encodeFrames, postprocessMasks), made at first use; guarded by imageOpsLock.
    private final Object imageOpsLock = new Object();
    private ImageOpsKernels imageOps;
    private GpuFramePreprocessor framePreprocessor;
    private GpuMaskPostprocessor maskPostprocessor;
    private CudaEmbeddingPool appearancePool;
    private CudaCellSimilarity appearanceMaps;
    /** Whether forward passes replay CUDA graphs ({@code samstream.cuda.graphs}). */
    private final boolean useGraphs;
    /** Captured forward passes by batch size (made on first use). */
    private final Map<Integer, CudaGraph> graphs = new HashMap<>();

    /** Encoder weight sparsity: which block Linears run on the sparse tensor cores. */
    private final ModelSparsity sparsity;
    /** The encoder blocks' Linears in bf16 or FP8 ({@code samstream.model.precision}). */
    private final ModelPrecision precision;

    /** Prompt sets the GPU mask decoder takes in one batch unless told otherwise (SAM's automatic mask generator uses 64). */
    public static final int DEFAULT_MAX_PROMPT_SETS = 64;
    /** Embedding slots of the device ring unless told otherwise, in batches: the engine's in-flight 2, + 2. */
    public static final int DEFAULT_RING_BATCHES = 4;
    /** How long {@link #embedFrames} waits for free embedding slots before it fails. */
    static final long RING_ACQUIRE_TIMEOUT_MILLIS = 60_000;

    /**
     * Opens the GPU, checks the model fits the kernels, sizes the pool and uploads the weights. With 2:4 sparsity
     * ({@link CudaSamOptions#sparsity}) the Linears it names must already be pruned in {@code weights}
     * ({@link SparseEncoder#apply}; a dense one is an error) and run on the sparse tensor cores; the others stay
     * dense.
     *
     * @param weights the checkpoint's tensors under Meta's key names
     * @param config  the model's shape (normally inferred from the same checkpoint)
     * @param options the largest batch, the mask decoder's batch, the embedding ring, sparsity, CUDA graphs, the GPU
     * @throws IllegalArgumentException when the model's shape is not one the kernels support
     * @throws CudaException            when the GPU is unusable or too small
     */
    public CudaSamBackend(StateDict weights, SamConfig config, CudaSamOptions options) {
        int maxBatch = options.maxBatch(), decoderThreads = options.decoderThreads();
        int maxPromptSets = options.maxPromptSets(), embeddingSlots = options.embeddingSlots();
        ModelSparsity sparsity = options.sparsity();
        this.sparsity = sparsity;
        this.useGraphs = options.cuda().graphs();
        this.config = config;
        this.maxBatch = maxBatch;
        this.s = config.imageSize();
        this.e = config.embeddingSize();
        this.tokens = e * e;
        this.neckC = config.promptDim();
        CudaImageEncoder.checkSupported(config, maxBatch);
        if (embeddingSlots < maxBatch) {
            throw new IllegalArgumentException("the embedding ring needs at least max batch (" + maxBatch
                    + ") slots, got " + embeddingSlots);
        }

        long imageBytes = CudaImageEncoder.inputBytes(config, maxBatch);
        long outBytes = CudaImageEncoder.outputBytes(config, maxBatch);
        ModelPrecision precision = options.cuda().precision();
        this.precision = precision;
        long activations = CudaImageEncoder.activationBytes(config, maxBatch, precision);
        long weightsSize = CudaImageEncoder.weightBytes(config, precision);
        this.weightBytes = weightsSize;
        this.activationBytes = activations;

        this.context = CudaContext.open(options.device());
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
                    gdec = new CudaMaskDecoder(weights, config, context, k, maxPromptSets, options.cuda().decoderGraphs());
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
            encoder = new CudaImageEncoder(weights, config, maxBatch, sparsity, precision, k, st, pl, in);
        } catch (RuntimeException | Error ex) {
            close();
            throw ex;
        }
        log.info("cuda backend: {} on {}, max batch {}: device pool {} (weights {}, activations {}), embedding ring {}"
                + " ({} slots), pinned {}", config.describe(), context.info().describe(), maxBatch,
                Cuda.bytes(pool.capacity()), Cuda.bytes(weightBytes), Cuda.bytes(activationBytes),
                Cuda.bytes(ring.bytes()), ring.capacity(), Cuda.bytes(inPinned.bytes() + outPinned.bytes()));
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
                + (precision == ModelPrecision.FP8 ? ", encoder linears fp8 e4m3" : "")
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
        stream.upload(inPinned, 0, encoder.input(), 0, inBytes);
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
        framePreprocessor().enqueue(stream, frames, encoder.input());
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
                framePreprocessor().enqueue(stream, frames, encoder.input());
                runForward(batch, useGraphs);
                long bytes = 2L * tokens * neckC;
                for (int i = 0; i < batch; i++) {
                    stream.copy(encoder.output().slice(i * bytes, bytes, "embedding " + i), slots.get(i).buffer(), bytes);
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
        DeviceBuffer out = encoder.channelsFirst(batch);
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

    /** The tracker's appearance means, pooled in place from the ring's slots ({@link CudaEmbeddingPool}). */
    @Override
    public List<float[]> poolEmbeddings(List<io.samstream.gpu.model.EmbeddingPool.Request> requests) {
        CudaEmbeddingPool p;
        synchronized (imageOpsLock) {
            ensureOpen();
            if (appearancePool == null) {
                appearancePool = new CudaEmbeddingPool(kernels, ring, config.embeddingSize(), neckC);
            }
            p = appearancePool;
        }
        return p.pool(requests);
    }

    /** The tracker's appearance maps, computed in place from the ring's slots ({@link CudaCellSimilarity}). */
    @Override
    public List<float[]> cellSimilarities(List<io.samstream.gpu.model.EmbeddingPool.CellRequest> requests) {
        CudaCellSimilarity m;
        synchronized (imageOpsLock) {
            ensureOpen();
            if (appearanceMaps == null) {
                appearanceMaps = new CudaCellSimilarity(kernels, ring, config.embeddingSize(), neckC);
            }
            m = appearanceMaps;
        }
        return m.run(requests);
    }

    /**
     * A stream's camera-motion matcher on the ring's slots ({@link CudaEmbeddingMatcher}); the caller closes it
     * (before this backend).
     */
    @Override
    public io.samstream.gpu.model.EmbeddingMatcher embeddingMatcher(int range) {
        synchronized (imageOpsLock) {
            ensureOpen();
            return new CudaEmbeddingMatcher(kernels, ring, config.embeddingSize(), neckC, range);
        }
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
        stream.upload(inPinned, 0, encoder.input(), 0, (long) batch * 3 * s * s * 4);
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
        try (StepProfiler prof = new StepProfiler(context, stream)) {
            for (int it = 0; it < iterations; it++) {
                prof.begin();
                encoder.forward(batch, prof);
                stream.synchronize();
                prof.collect();
            }
            return prof.averages(iterations);
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
            encoder.forward(batch, null);
        }
    }

    private CudaGraph graphFor(int batch) {
        CudaGraph g = graphs.get(batch);
        if (g == null) {
            g = CudaGraph.capture(stream, () -> encoder.forward(batch, null), "the encoder forward pass at batch " + batch);
            graphs.put(batch, g);
        }
        return g;
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
            closeAll(maskPostprocessor, framePreprocessor, appearancePool, appearanceMaps);
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
