package io.samstream.gpu.cuda.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.GpuWorkspace;
import io.samstream.gpu.cuda.GraphCache;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.StagedCopy;
import io.samstream.gpu.cuda.kernels.Sam2Kernels;
import io.samstream.gpu.sam2.FrameFeatures;
import io.samstream.gpu.sam2.HieraSchedule;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Offload;
import io.samstream.gpu.sam2.Sam2VideoTracker;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link io.samstream.gpu.sam2.Sam2Model}'s image encoder, memory attention and memory encoder on one GPU in bf16
 * ({@link CudaSam2ImageEncoder}, {@link CudaMemoryAttention}, {@link CudaMemoryEncoder}), one object at a time, with
 * the CPU reference's fp32 inputs and outputs: each call uploads its inputs, runs its part and brings the result back
 * (synchronous). The mask decoder stays on the CPU until it has a CUDA version; the features cross PCIe once per frame
 * and object each way (a few MB), which the whole-GPU video step will remove.
 *
 * <p>Each part's launches (~150 for hiera_tiny's encoder, ~80 for the memory attention) are captured into a CUDA
 * graph per shape the first time it is seen (the memory attention by memory length and pointer tokens, the memory
 * encoder by its two flags; at most {@value #MAX_GRAPHS} in all, the least recently used dropped) and replayed with one
 * launch; a capture that fails is logged once and the parts run launch by launch from then on.
 *
 * <p>The memory attention is sized for a bank of {@link Sam2VideoTracker#DEFAULT_MAX_CONDITIONING} conditioning
 * frames plus the last {@code numMaskmem - 1} frames and their object pointers. Owns its context's device memory,
 * stream and pinned buffer; calls are serialized.
 */
public final class CudaSam2Offload implements Sam2Offload {
    private static final long STAGING_BYTES = 64L << 20;
    /** Graphs kept: a bank fills over its first frames, then its shapes repeat. */
    static final int MAX_GRAPHS = 32;

    private final Sam2Config config;
    private final GpuWorkspace gpu;
    private final CudaStream stream;
    private final PinnedBuffer staging;
    private final CudaSam2ImageEncoder imageEncoder;
    private final CudaMemoryAttention memoryAttention;
    private final CudaMemoryEncoder memoryEncoder;
    private final DeviceBuffer top, memory, memoryPos, logits, score;
    private final int maxMemory;
    private final GraphCache graphs = new GraphCache("SAM 2", MAX_GRAPHS);
    private boolean closed;

    /**
     * Opens GPU {@code ordinal} and uploads the three parts' weights; a configuration the kernels cannot run is an
     * {@link IllegalArgumentException} naming what ({@link #unsupported}), before any GPU work.
     */
    public static CudaSam2Offload open(StateDict sd, Sam2Config config, int ordinal) {
        List<String> problems = unsupported(config);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("the CUDA SAM 2.1 parts cannot run " + config + ": "
                    + String.join("; ", problems));
        }
        int maxMemory = maxMemory(config);
        GpuWorkspace gpu = GpuWorkspace.open(ordinal, STAGING_BYTES, poolBytes(config, maxMemory), "SAM 2");
        try {
            return new CudaSam2Offload(sd, config, maxMemory, gpu);
        } catch (RuntimeException e) {
            gpu.close();
            throw e;
        }
    }

    /**
     * Memory tokens the attention is sized for: {@link Sam2VideoTracker#DEFAULT_MAX_CONDITIONING} conditioning frames
     * plus the last {@code numMaskmem - 1} frames, and their object pointers.
     */
    private static int maxMemory(Sam2Config config) {
        int tokens = config.featureSize() * config.featureSize();
        int split = config.hidden() / config.memDim();
        int conditioning = Sam2VideoTracker.DEFAULT_MAX_CONDITIONING;
        return (conditioning + config.numMaskmem() - 1) * tokens
                + (conditioning + Sam2Config.MAX_OBJECT_POINTERS - 1) * split;
    }

    /** The parts and their input buffers in {@code gpu}'s pool (bump allocation; nothing is freed). */
    private CudaSam2Offload(StateDict sd, Sam2Config config, int maxMemory, GpuWorkspace gpu) {
        this.config = config;
        this.gpu = gpu;
        this.maxMemory = maxMemory;
        this.stream = gpu.stream();
        this.staging = gpu.staging();
        CudaKernels kernels = gpu.kernels();
        DeviceMemoryPool p = gpu.pool();
        int f = config.featureSize();
        int tokens = f * f;
        this.imageEncoder = new CudaSam2ImageEncoder(sd, config, 1, kernels, stream, p, staging);
        this.memoryAttention = new CudaMemoryAttention(sd, config, 1, maxMemory, kernels, stream, p, staging);
        this.memoryEncoder = new CudaMemoryEncoder(sd, config, 1, kernels, stream, p, staging);
        this.top = p.allocateBf16((long) tokens * config.hidden(), "SAM 2 features in");
        this.memory = p.allocateBf16((long) maxMemory * config.memDim(), "SAM 2 memory in");
        this.memoryPos = p.allocateBf16((long) maxMemory * config.memDim(), "SAM 2 memory position in");
        this.logits = p.allocate((long) config.lowResSize() * config.lowResSize() * 4, "SAM 2 logits in");
        this.score = p.allocate(4, "SAM 2 object score in");
    }

    /**
     * What the kernels cannot run in {@code c}, one line each (none for Meta's releases): the GEMMs and row kernels
     * need widths that are multiples of 8, the attention kernels head dims that are multiples of 8 up to 256, the
     * rotary encoding a head width divisible by 4, Hiera's pooling even windows.
     */
    public static List<String> unsupported(Sam2Config c) {
        List<String> problems = new ArrayList<>();
        for (HieraSchedule.Block b : HieraSchedule.blocks(c)) {
            if (b.dim() % 8 != 0 || b.dimOut() % 8 != 0) {
                problems.add("Hiera block " + b.index() + " widths " + b.dim() + " -> " + b.dimOut()
                        + " (multiples of 8)");
            } else if (b.dimOut() % b.heads() != 0 || b.headDim() % 8 != 0 || Sam2Kernels.sdpaCeiling(b.headDim()) < 0) {
                problems.add("Hiera block " + b.index() + " head dim " + b.dimOut() + "/" + b.heads()
                        + " (a multiple of 8 up to 256)");
            }
            if (b.pool() && b.window() % 2 != 0) {
                problems.add("Hiera block " + b.index() + " pools a window of " + b.window() + " (even)");
            }
        }
        int hidden = c.hidden();
        int heads = c.layout().memAttnHeads();
        if (hidden % 64 != 0) {
            problems.add("hidden width " + hidden + " (a multiple of 64: conv_s0 has hidden/8 channels)");
        }
        if (c.memDim() % 8 != 0 || c.memAttnFfn() % 8 != 0) {
            problems.add("memory width " + c.memDim() + " / feed-forward " + c.memAttnFfn() + " (multiples of 8)");
        }
        if (heads < 1 || hidden % heads != 0 || (hidden / heads) % 8 != 0 || Sam2Kernels.sdpaCeiling(hidden / heads) < 0) {
            problems.add("memory attention head dim " + hidden + "/" + heads + " (a multiple of 8 up to 256)");
        }
        if (c.downsampleKernel() != 3 || c.fuserKernel() % 2 != 1) {
            problems.add("memory encoder kernels " + c.downsampleKernel() + " / " + c.fuserKernel() + " (3 / odd)");
        }
        return problems;
    }

    /** Device bytes for the parts at batch 1: the activations grow with the memory tokens. */
    static long poolBytes(Sam2Config c, int maxMemory) {
        long s = c.imageSize();
        long tokens = (long) c.featureSize() * c.featureSize();
        long image = 96 * s * s * 4L;                                  // Hiera's activations, generously
        long attention = (long) maxMemory * (2L * c.hidden() + 3L * c.memDim()) * 2
                + tokens * (8L * c.hidden() + c.memAttnFfn()) * 2
                + (long) Sam2Kernels.MAX_SPLITS * tokens * (c.hidden() * 4L + 8);
        long encoder = 8 * s * s * 4L;
        long inputs = (2L * maxMemory * c.memDim() + tokens * c.hidden()) * 2 + (long) c.lowResSize() * c.lowResSize() * 4;
        return image + attention + encoder + inputs + (512L << 20);    // + the weights (base+ ~150 MB, large ~450 MB)
    }

    @Override
    public synchronized FrameFeatures encodeImage(float[] planarImage) {
        ensureOpen();
        return imageEncoder.encode(planarImage,
                () -> graphs.run(stream, "image encoder", () -> imageEncoder.forward(1)));
    }

    @Override
    public synchronized float[] attendMemory(float[] curr, float[] mem, float[] memPos, int m, int pointerTokens) {
        ensureOpen();
        if (m > maxMemory) {
            throw new IllegalArgumentException("memory of " + m + " tokens; the GPU memory attention holds " + maxMemory);
        }
        int md = config.memDim();
        if (mem.length != m * md || memPos.length != m * md) {
            throw new IllegalArgumentException("memory of " + mem.length + " / position of " + memPos.length
                    + " values for " + m + " tokens of " + md);
        }
        uploadBf16(curr, top);
        uploadBf16(mem, memory);
        uploadBf16(memPos, memoryPos);
        graphs.run(stream, java.util.List.of("memory attention", m, pointerTokens),
                () -> memoryAttention.forward(1, top, memory, memoryPos, m, pointerTokens));
        return downloadBf16(memoryAttention.output(), curr.length);
    }

    @Override
    public synchronized float[] encodeMemory(float[] pixFeat, float[] lowRes, boolean fromPrompt, boolean absent) {
        ensureOpen();
        uploadBf16(pixFeat, top);
        StagedCopy.uploadF32(stream, staging, lowRes, logits);
        StagedCopy.uploadF32(stream, staging, new float[] {absent ? -1f : 1f}, score);
        graphs.run(stream, java.util.List.of("memory encoder", fromPrompt),
                () -> memoryEncoder.forward(1, top, logits, new boolean[] {fromPrompt}, score));
        int f = config.featureSize();
        return downloadBf16(memoryEncoder.output(), f * f * config.memDim());
    }

    @Override
    public String describe() {
        return "CUDA " + gpu.context().info().describe() + " (bf16: image encoder, memory attention, memory encoder; mask "
                + "decoder on the CPU)";
    }

    private void uploadBf16(float[] values, DeviceBuffer dst) {
        StagedCopy.uploadBf16(stream, staging, values, dst);
    }

    private float[] downloadBf16(DeviceBuffer src, int count) {
        return StagedCopy.downloadBf16(stream, staging, src, count);
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the SAM 2 GPU parts are closed");
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            graphs.close();
        } finally {
            gpu.close();
        }
    }
}
