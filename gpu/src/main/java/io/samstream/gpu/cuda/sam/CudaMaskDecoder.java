package io.samstream.gpu.cuda.sam;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.samstream.gpu.checkpoint.StateDict;
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
import io.samstream.gpu.cuda.DeviceWeights.Dense;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.StepProfiler;
import io.samstream.gpu.cuda.blocks.CudaTwoWayTransformer;
import io.samstream.gpu.cuda.kernels.DecoderKernels;
import io.samstream.gpu.cuda.kernels.EncoderOpsKernels;
import io.samstream.gpu.cuda.kernels.GemmKernels;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend.DecodeRequest;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;

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
    private final int c, e, t, l, mt, mi, iouHidden, co1, co2;
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
    private final PromptEncoderWeights promptEncoder;
    private final CudaTwoWayTransformer transformer;
    private final OutputHeadWeights outputHeads;
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
        this.mt = config.numMultimaskOutputs() + 1;
        this.mi = config.maskInChans();
        this.iouHidden = config.iouHeadHiddenDim();
        this.co1 = c / 4;
        this.co2 = c / 8;
        this.context = context;
        this.gemm = GemmKernels.of(kernels);
        this.encoderOps = EncoderOpsKernels.of(kernels);

        MaskDecoderSizes z = MaskDecoderSizes.of(config, maxSets);
        long s = maxSets, rowsTok = z.rowsTok(), imgElems = z.imgElems(), wideElems = z.wideElems();
        long outMasks = z.outMasks();
        long[] act = z.act();
        this.poolBytes = z.poolBytes();
        long embBytes = Math.max((long) c * t * 4, 4L << 20);
        long inBytes = DecodeChunk.inBytes(maxSets, MAX_SPARSE, maxSets, l);
        long outBytes = DecodeChunk.outBytes(maxSets, mt);

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
            promptEncoder = PromptEncoderWeights.load(w, sd, config, pool, dk, stream);
            outputHeads = OutputHeadWeights.load(w, sd, config);
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
        List<DecodeChunk> chunks = DecodeChunk.plan(requests, maxSets, c, e, l);
        List<DecoderOutput[]> results = new ArrayList<>(requests.size());
        for (DecodeRequest req : requests) {
            results.add(new DecoderOutput[req.prompts().size()]);
        }
        if (!chunks.isEmpty()) {
            long inBytes = 0;
            long outBytes = 0;
            long logitBytes = 0;
            for (DecodeChunk ch : chunks) {
                ch.inAt = inBytes;
                ch.outAt = outBytes;
                ch.logitsAt = logitBytes;
                inBytes += DecodeChunk.inBytes(ch.sets.size(), ch.ns, ch.withMask, l);
                outBytes += DecodeChunk.outBytes(ch.sets.size(), mt);
                logitBytes += DecodeChunk.logitBytes(ch.sets.size(), ch.multimask ? mt - 1 : 1, l);
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
            for (DecodeChunk ch : chunks) {
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
            for (DecodeChunk ch : chunks) {
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
    private boolean stageImages(List<DecodeRequest> requests, DecodeChunk ch, boolean hostUploadPending) {
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

    /** Stages, uploads, runs (graph or launches) and queues the download of one chunk. */
    private void runChunk(List<DecodeRequest> requests, DecodeChunk ch) {
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
        int withMask = ch.writePrompts(requests, config.imageSize(), l, cf, ci, si, mf);
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
    private void unpack(DecodeChunk ch, WaveLogits wave, List<DecoderOutput[]> results) {
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
        PromptEncoderWeights pe = promptEncoder;
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
        OutputHeadWeights oh = outputHeads;
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
