package io.samstream.gpu.cuda.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.GpuWorkspace;
import io.samstream.gpu.cuda.GraphCache;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.StagedCopy;
import io.samstream.gpu.cuda.kernels.Sam2Kernels;
import io.samstream.gpu.cuda.sam2.CudaMemoryAttention;
import io.samstream.gpu.cuda.sam2.CudaMemoryEncoder;
import io.samstream.gpu.cuda.sam2.CudaSam2MaskDecoder;
import io.samstream.gpu.sam2.FrameFeatures;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Shapes;
import io.samstream.gpu.sam3.Sam3Checkpoint;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import io.samstream.gpu.sam3.video.Propagation;
import io.samstream.gpu.sam3.video.Sam3TrackerModel;
import io.samstream.gpu.sam3.video.SpatialMemory;
import io.samstream.gpu.sam3.video.TrackerPasses;
import java.lang.ref.WeakReference;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * SAM 3's tracker passes on one GPU in bf16: SAM 2.1's memory attention, mask decoder and memory encoder ({@link
 * CudaMemoryAttention}, {@link CudaSam2MaskDecoder}, {@link CudaMemoryEncoder}), loaded from the tracker's keys under
 * SAM 2.1's names ({@link Sam3Checkpoint#tracker}) and sized by {@link Sam3TrackerConfig#sam2Parts()}, as the CPU
 * reference ({@link Sam3TrackerModel}) loads them. One object at a time, with the CPU reference's fp32 inputs and
 * outputs: each call uploads its inputs, replays its part and brings the result back (synchronous).
 *
 * <ul>
 *   <li>{@link #propagate}: the memory attention and the decoder without prompts, several masks, the best by IoU;
 *       the memory and its positions are the CPU's ({@link Sam3TrackerModel#memoryInputs}), uploaded as bf16;</li>
 *   <li>{@link #encodeMemory}: the memory encoder on the caller's scaled mask ({@link
 *       CudaMemoryEncoder#forwardScaled}), the no-object embedding for an absent object, bf16 out;</li>
 *   <li>{@link #pointerFromMask} stays on the CPU reference: a mask as the decoder's dense prompt is not in the GPU
 *       decoder, and it runs once per new (or re-conditioned) object.</li>
 * </ul>
 * A frame's features go up once (bf16) for all the calls on them: the last {@link FrameFeatures} uploaded is known
 * by identity, so a frame's objects and memories reuse it. Each part's launches are captured into a CUDA graph per
 * shape (the propagation by memory tokens and pointer tokens), at most {@value #MAX_GRAPHS}, through a {@link
 * GraphCache}. The memory attention holds the most a frame reads: {@link Sam3TrackerConfig#MAX_CONDITIONING_FRAMES}
 * conditioning frames, {@code numMaskmem - 1} tracked ones and their pointers. Owns its GPU workspace; calls are
 * serialized.
 */
public final class CudaSam3Tracker implements TrackerPasses {
    private static final long STAGING_BYTES = 32L << 20;
    /** Graphs kept: an object's memory fills over its first frames, then its shapes repeat. */
    static final int MAX_GRAPHS = 32;
    /** Pool bytes beyond the estimate of the parts' weights and activations. */
    static final long SPARE_BYTES = 64L << 20;

    private final Sam3TrackerConfig config;
    private final Sam3TrackerModel cpu;
    private final GpuWorkspace gpu;
    private final CudaStream stream;
    private final PinnedBuffer staging;
    private final CudaMemoryAttention attention;
    private final CudaMemoryEncoder encoder;
    private final CudaSam2MaskDecoder decoder;
    private final DeviceBuffer top, s0, s1, frameOfSet, memory, memoryPos, mask, presence;
    private final int maxMemory;
    private final GraphCache graphs = new GraphCache("SAM 3 tracker", MAX_GRAPHS);
    /** The frame whose features are on the device (none, when its upload did not finish). */
    private WeakReference<FrameFeatures> uploaded = new WeakReference<>(null);
    private boolean closed;

    /** The factory a {@code Sam3VideoModel} takes: the tracker's passes on GPU {@code ordinal}. */
    public static TrackerPasses.Factory factory(int ordinal) {
        return (checkpoint, config, cpu) -> open(checkpoint, config, cpu, ordinal);
    }

    /**
     * Opens GPU {@code ordinal} and uploads the parts' weights from {@code checkpoint} (sam3.pt); {@code cpu} is the
     * same checkpoint's CPU tracker (the memory inputs, the mask-prompt pointers). A configuration the kernels cannot
     * run is an {@link IllegalArgumentException} naming what ({@link #unsupported}), before any GPU work.
     */
    public static CudaSam3Tracker open(StateDict checkpoint, Sam3TrackerConfig config, Sam3TrackerModel cpu,
            int ordinal) {
        checkSupported(config);
        StateDict sd = Sam3Checkpoint.tracker(checkpoint);
        GpuWorkspace gpu = GpuWorkspace.open(ordinal, STAGING_BYTES, poolBytes(config), "SAM 3 tracker");
        try {
            return new CudaSam3Tracker(sd, config, cpu, gpu);
        } catch (RuntimeException e) {
            gpu.close();
            throw e;
        }
    }

    /** The parts and their input buffers in {@code gpu}'s pool; the decoder last, as it alone holds host resources. */
    private CudaSam3Tracker(StateDict sd, Sam3TrackerConfig config, Sam3TrackerModel cpu, GpuWorkspace gpu) {
        this.config = config;
        this.cpu = cpu;
        this.gpu = gpu;
        this.stream = gpu.stream();
        this.staging = gpu.staging();
        this.maxMemory = maxMemory(config);
        Sam2Config parts = config.sam2Parts();
        CudaKernels kernels = gpu.kernels();
        DeviceMemoryPool p = gpu.pool();
        int g = config.grid(), c = config.hidden(), s = config.maskSize();
        this.top = p.allocateBf16((long) g * g * c, "SAM 3 tracker features");
        this.s0 = p.allocateBf16(16L * g * g * (c / 8), "SAM 3 tracker conv_s0 features");
        this.s1 = p.allocateBf16(4L * g * g * (c / 4), "SAM 3 tracker conv_s1 features");
        this.frameOfSet = p.allocate(4, "SAM 3 tracker frame of the object");
        this.memory = p.allocateBf16((long) maxMemory * config.memDim(), "SAM 3 tracker memory");
        this.memoryPos = p.allocateBf16((long) maxMemory * config.memDim(), "SAM 3 tracker memory position");
        this.mask = p.allocate((long) s * s * 4, "SAM 3 tracker scaled mask");
        this.presence = p.allocate(4, "SAM 3 tracker presence");
        stream.fill16(frameOfSet, (short) 0);   // int 0: every pass reads the one frame's s0 / s1
        this.attention = new CudaMemoryAttention(sd, parts, 1, maxMemory, kernels, stream, p, staging);
        this.encoder = new CudaMemoryEncoder(sd, parts, 1, kernels, stream, p, staging);
        this.decoder = new CudaSam2MaskDecoder(sd, parts, 1, kernels, stream, p, staging);
    }

    /**
     * Memory tokens the attention holds: what {@code MemoryPicker} can give a frame,
     * {@link Sam3TrackerConfig#MAX_CONDITIONING_FRAMES} conditioning memories and {@code numMaskmem - 1} tracked ones,
     * with the pointers of the conditioning frames and of up to {@link Sam3TrackerConfig#MAX_OBJECT_POINTERS} - 1
     * tracked ones.
     */
    static int maxMemory(Sam3TrackerConfig c) {
        int conditioning = Sam3TrackerConfig.MAX_CONDITIONING_FRAMES;
        return (conditioning + c.numMaskmem() - 1) * c.grid() * c.grid()
                + (conditioning + Sam3TrackerConfig.MAX_OBJECT_POINTERS - 1) * (c.hidden() / c.memDim());
    }

    /**
     * What the kernels cannot run in {@code c}, one line each (none for Meta's release): the mask decoder's limits
     * ({@link CudaSam2MaskDecoder#unsupported}); the GEMMs' widths in multiples of 8; the memory attention's head dim
     * a multiple of 8 up to 256; the memory encoder's 3x3 stride-2 downsampler of 4 stages (16 x grid down to the
     * grid) and an odd fuser kernel.
     */
    public static List<String> unsupported(Sam3TrackerConfig c) {
        List<String> problems = new ArrayList<>();
        Sam2Config parts = c.sam2Parts();
        String decoder = CudaSam2MaskDecoder.unsupported(parts);
        if (decoder != null) {
            problems.add("mask decoder: " + decoder);
        }
        if (c.memDim() < 1 || c.memDim() % 8 != 0 || c.memAttnFfn() % 8 != 0) {
            problems.add("memory width " + c.memDim() + " / feed-forward " + c.memAttnFfn() + " (multiples of 8)");
        } else if (c.hidden() % c.memDim() != 0) {
            problems.add("hidden width " + c.hidden() + " (a multiple of the memory width " + c.memDim()
                    + ": the pointers' tokens)");
        }
        int heads = parts.layout().memAttnHeads();
        int hd = heads < 1 ? 0 : c.hidden() / heads;
        if (hd < 1 || c.hidden() % heads != 0 || hd % 8 != 0 || Sam2Kernels.sdpaCeiling(hd) < 0) {
            problems.add("memory attention head dim " + c.hidden() + "/" + heads + " (a multiple of 8 up to 256)");
        }
        if (c.downsampleKernel() != 3 || (1 << c.downsampleLayers()) != 16) {
            problems.add("mask downsampler of " + c.downsampleLayers() + " stages of " + c.downsampleKernel() + "x"
                    + c.downsampleKernel() + " (4 stages of 3x3: the mask at 16 x grid down to the grid)");
        }
        if (c.fuserKernel() % 2 != 1) {
            problems.add("memory fuser kernel " + c.fuserKernel() + " (odd)");
        }
        return problems;
    }

    /** {@link #unsupported} as an {@link IllegalArgumentException} naming every problem; nothing when there is none. */
    public static void checkSupported(Sam3TrackerConfig c) {
        List<String> problems = unsupported(c);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("the CUDA SAM 3 tracker cannot run " + c + ": "
                    + String.join("; ", problems));
        }
    }

    /**
     * The pool: the decoder's ({@link CudaSam2MaskDecoder#poolBytes}); the memory attention's and encoder's weights
     * (bounded at 4 bytes a value, each tensor 256-byte aligned) and tables; their activations at batch 1 over
     * {@link #maxMemory} tokens; this class's inputs; and {@link #SPARE_BYTES}.
     */
    static long poolBytes(Sam3TrackerConfig c) {
        Sam2Config parts = c.sam2Parts();
        long tokens = (long) c.grid() * c.grid(), h = c.hidden(), md = c.memDim(), s = c.maskSize();
        long mem = maxMemory(c);
        int heads = parts.layout().memAttnHeads();
        long weights = 0;
        for (Map<String, int[]> part : List.of(Sam2Shapes.memoryAttention(parts), Sam2Shapes.memoryEncoder(parts))) {
            for (int[] shape : part.values()) {
                long n = 1;
                for (int d : shape) {
                    n *= d;
                }
                weights += align(n * 4);
            }
        }
        long tables = tokens * h * 4 + tokens * h * 2;                           // rope cos + sin, 0.1 x position
        long attention = tokens * (8 * h + c.memAttnFfn()) * 2 + mem * (md + 2 * h) * 2
                + Sam2Kernels.splitScratchBytes(1, heads, (int) tokens, (int) h / heads, Sam2Kernels.MAX_SPLITS);
        // two fp32 and two bf16 mask-sized buffers, im2col rows (9/4 of a mask in bf16); the downsampled mask (4^L
        // channels), x, its depthwise output, the 4x-wide hidden rows and the output at the grid
        long downChannels = 1L << (2 * c.downsampleLayers());
        long encoder = s * s * (4 + 4 + 2 + 2 + 5) + tokens * (downChannels + 6 * h + md) * 2;
        long inputs = tokens * h * (2 + 4 + 2) + 2 * mem * md * 2 + s * s * 4;   // top, s0, s1; memory, pos; mask
        long allocations = 64 * 256;
        return CudaSam2MaskDecoder.poolBytes(parts, 1) + weights + tables + attention + encoder + inputs + allocations
                + SPARE_BYTES;
    }

    private static long align(long bytes) {
        return BumpAllocator.alignUp(Math.max(bytes, 1));
    }

    @Override
    public Sam3TrackerConfig config() {
        return config;
    }

    /**
     * As {@link Sam3TrackerModel#propagate}, step for step:
     * <ul>
     *   <li>memory attention: the same memory and positions ({@link Sam3TrackerModel#memoryInputs}); the frame's
     *       features plus 0.1 x their sine position, which {@link CudaMemoryAttention} makes from the same encoding
     *       at the grid (its feature size, mask size / 16); the pointer tokens at the end, not rotated;</li>
     *   <li>decoder without prompts ({@link CudaSam2MaskDecoder#stageNoPrompts}: a point labelled -1 and the padding
     *       point, both {@code not_a_point_embed} whatever their place, as the CPU's padding point), the dense prompt
     *       {@code no_mask_embed}, the conv_s0 / conv_s1 features of the frame;</li>
     *   <li>the choice (multimask): the best sigmoid IoU of masks 1..3, ties to the lower one
     *       ({@code Sam2MaskDecoder.argmax}); present when the object score is above 0 (NaN: absent); absent, the mask
     *       all {@link Sam3TrackerModel#NO_OBJECT_SCORE} and the pointer {@code no_obj_ptr}, else {@code
     *       obj_ptr_proj} of the chosen mask's token.</li>
     * </ul>
     * What differs: the image side in bf16 (fp32 accumulation), and the pointer comes back rounded to bf16 (the CPU's
     * is fp32; as memory it is rounded to bf16 on its way up anyway).
     */
    @Override
    public synchronized Propagation propagate(CpuThreadPool pool, FrameFeatures f,
            List<Sam3TrackerModel.Spatial> spatial, List<Sam3TrackerModel.Pointer> pointers, int pointerWindow) {
        ensureOpen();
        Sam3TrackerModel.MemoryInputs in = cpu.memoryInputs(pool, spatial, pointers, pointerWindow);
        if (in.tokens() > maxMemory) {
            throw new IllegalArgumentException("memory of " + in.tokens() + " tokens (" + spatial.size()
                    + " memories, " + pointers.size() + " pointers); the GPU tracker holds " + maxMemory);
        }
        upload(f);
        StagedCopy.uploadBf16(stream, staging, in.memory(), memory);
        StagedCopy.uploadBf16(stream, staging, in.pos(), memoryPos);
        decoder.stageNoPrompts(1);
        int m = in.tokens(), pointerTokens = in.pointerTokens();
        graphs.run(stream, List.of("propagate", m, pointerTokens), () -> {
            attention.forward(1, top, memory, memoryPos, m, pointerTokens);
            decoder.forward(1, 2, true, attention.output(), s0, s1, frameOfSet);
        });
        return downloadPropagation();
    }

    /** The decoder's outputs of one object, in one trip: low-res logits, object score, IoU (fp32), pointer (bf16). */
    private Propagation downloadPropagation() {
        int l = config.lowResSize(), c = config.hidden();
        long lowBytes = (long) l * l * 4;
        stream.download(decoder.lowRes(), 0, staging, 0, lowBytes);
        stream.download(decoder.objectScores(), 0, staging, lowBytes, 4);
        stream.download(decoder.ious(), 0, staging, lowBytes + 4, 4);
        stream.download(decoder.pointers(), 0, staging, lowBytes + 8, (long) c * 2);
        stream.synchronize();
        FloatBuffer values = staging.buffer().asFloatBuffer();
        float[] lowRes = new float[l * l];
        values.get(lowRes);
        float score = values.get();
        float iou = values.get();
        return new Propagation(lowRes, score, staging.getBf16((lowBytes + 8) / 2, c), iou);
    }

    /** The CPU reference's: the decoder with a mask prompt is not on the GPU, and it runs once per new object. */
    @Override
    public float[] pointerFromMask(CpuThreadPool pool, FrameFeatures f, boolean[] mask) {
        return cpu.pointerFromMask(pool, f, mask);
    }

    /**
     * As {@link Sam3TrackerModel#encodeMemory}: the memory encoder on {@code scaledMask} ([maskSize²], already
     * scaled) and the frame's features, plus {@code no_obj_embed_spatial} when absent, bf16 (the output is rounded
     * before that sum, the CPU's after it).
     */
    @Override
    public synchronized SpatialMemory encodeMemory(CpuThreadPool pool, FrameFeatures f, float[] scaledMask,
            boolean present) {
        ensureOpen();
        int s = config.maskSize(), g = config.grid();
        if (scaledMask.length != s * s) {
            throw new IllegalArgumentException("scaled mask of " + scaledMask.length + " values; " + s + " x " + s
                    + " expected");
        }
        upload(f);
        StagedCopy.uploadF32(stream, staging, scaledMask, mask);
        StagedCopy.uploadF32(stream, staging, new float[] {present ? 1f : -1f}, presence);
        graphs.run(stream, List.of("memory encoder"), () -> encoder.forwardScaled(1, top, mask, presence));
        return SpatialMemory.host(StagedCopy.downloadBf16(stream, staging, encoder.output(),
                (long) g * g * config.memDim()));
    }

    /** The frame's features as bf16 on the device, unless they are the last uploaded. */
    private void upload(FrameFeatures f) {
        if (uploaded.get() == f) {
            return;
        }
        int g = config.grid(), c = config.hidden();
        if (f.side() != g || f.top().length != g * g * c || f.s0().length != 16 * g * g * (c / 8)
                || f.s1().length != 4 * g * g * (c / 4)) {
            throw new IllegalArgumentException("frame features of side " + f.side() + " (" + f.top().length + ", "
                    + f.s0().length + ", " + f.s1().length + " values); the tracker's grid is " + g + " at width " + c);
        }
        uploaded = new WeakReference<>(null);
        StagedCopy.uploadBf16(stream, staging, f.top(), top);
        StagedCopy.uploadBf16(stream, staging, f.s0(), s0);
        StagedCopy.uploadBf16(stream, staging, f.s1(), s1);
        uploaded = new WeakReference<>(f);
    }

    /** "memory attention, mask decoder and memory encoder on GPU name (bf16); ..." for logs and masks.json. */
    @Override
    public String describe() {
        return "memory attention, mask decoder and memory encoder on " + gpu.context().info().describe()
                + " (bf16); new objects' pointers on the CPU (fp32)";
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the CUDA SAM 3 tracker is closed");
        }
    }

    /** Frees the graphs, the decoder's staging and the GPU workspace; the CPU model stays the caller's. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            graphs.close();
            decoder.close();
        } finally {
            gpu.close();
        }
    }
}
