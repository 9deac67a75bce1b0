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
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Sam3Checkpoint;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import io.samstream.gpu.sam3.video.Propagation;
import io.samstream.gpu.sam3.video.Sam3TrackerModel;
import io.samstream.gpu.sam3.video.TrackerFrame;
import io.samstream.gpu.sam3.video.TrackerPasses;
import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * SAM 3's tracker passes on one GPU in bf16: SAM 2.1's memory attention, mask decoder and memory encoder ({@link
 * CudaMemoryAttention}, {@link CudaSam2MaskDecoder}, {@link CudaMemoryEncoder}), loaded from the tracker's keys under
 * SAM 2.1's names ({@link Sam3Checkpoint#tracker}) and sized by {@link Sam3TrackerConfig#sam2Parts()}, as the CPU
 * reference ({@link Sam3TrackerModel}) loads them. One object at a time, with the CPU reference's fp32 inputs and
 * outputs except the memories, which stay on the device:
 *
 * <ul>
 *   <li>{@link #encodeMemory}: the memory encoder on the caller's scaled mask ({@link
 *       CudaMemoryEncoder#forwardScaled}), the no-object embedding for an absent object, bf16 out, copied into a slot
 *       of the device bank (no download, no wait); the caller gets a {@link FeatureMap} handle to it;</li>
 *   <li>{@link #propagate} / {@link #propagateAll}: the memory attention and the decoder without prompts, several
 *       masks, the best by IoU.
 *       The attention's memory input is assembled on the device by one copy-table launch ({@link
 *       Sam2Kernels#copySpans}) inside the pass's graph: each spatial memory from its bank slot, each one's position
 *       (the spatial sine position + its temporal slot's embedding, {@link Sam3TrackerModel#spatialPosition}) from a
 *       table uploaded once at open. Only the pointer rows and their positions ({@link
 *       Sam3TrackerModel#pointerPosition}, a few hundred values) go up per call;</li>
 *   <li>{@link #pointerFromMask}: the mask's dense prompt made on the host (small) and uploaded, the decoder on the
 *       device; once per new (or re-conditioned) object.</li>
 * </ul>
 * The memory input is exactly what the previous design uploaded (the CPU's fp32 memory inputs rounded to bf16): the
 * memories are bf16 already, and the same positions are rounded the same way once instead of every call; so results
 * do not depend on where a memory was kept.
 *
 * <p><b>The bank.</b> A fixed number of slots of [grid², memDim] bf16 (at the release's shapes 648 KiB each), given at
 * open (default {@link #defaultSlots}: {@value #DEFAULT_BANK_OBJECTS} objects of {@link #slotsPerObject} memories,
 * all streams of the model together, as they share its passes): {@link MemoryBank}. A handle's {@link
 * FeatureMap#release} (its {@code ObjectMemory} pruning it, the object dropped) gives its slot back, and a handle
 * collected without a release gives it back too. With every slot taken a memory is handed out as a host one, which
 * {@link #propagate} uploads when it reads it: slower, never wrong ({@link #spilledMemories}). Memories of other
 * passes (host arrays, another GPU's handles) are read through their values the same way. Device memory is constant
 * over an endless stream: the pool is sized at open and nothing is allocated after.
 *
 * <p>A frame's features ({@link #features}) are made on the device from a {@link CudaSam3} tracker neck's levels on
 * the same GPU ({@link TrackerFeatures}: the 1x1 convolutions as GEMMs, into frame slots) and copied into the buffers
 * the passes read when a frame's first pass comes; the features of other levels (the CPU reference's) go up once
 * (bf16). The last frame there is known by identity, so a frame's objects and memories reuse it. Each part's
 * launches are captured into a CUDA graph per shape (the propagation by memory tokens, pointer tokens and copies),
 * at most {@value #MAX_GRAPHS}, through a {@link
 * GraphCache}. The memory attention holds the most a frame reads: {@link Sam3TrackerConfig#MAX_CONDITIONING_FRAMES}
 * conditioning frames, {@code numMaskmem - 1} tracked ones and their pointers. Owns its GPU workspace; the passes are
 * serialized (synchronized), slot releases take only the bank's own lock.
 *
 * <p>A frame's objects ({@link #propagateAll}, which a concept's step calls) are queued one after the other and the
 * host waits once for all of them (while their inputs and results fit the staging buffer). Each still runs as its
 * own batch-1 pass: batching them into one pass (the parts take a batch; SAM 2's {@code CudaSam2Tracker} groups
 * objects by memory shape) would need the attention's buffers per object. Memories are made by {@link
 * TrackerMemoryEncoder}: a tracked frame's from the objects' low-resolution masks on the device ({@link
 * #encodeTrackedMemories}), a new object's from its prompt mask ({@link #encodeMemory}, uploaded as fp32).
 */
public final class CudaSam3Tracker implements TrackerPasses {
    private static final long STAGING_BYTES = 32L << 20;
    /** Objects the default bank holds memories for, all streams together ({@link #defaultSlots}). */
    public static final int DEFAULT_BANK_OBJECTS = 64;
    /** Pointer positions kept per distance (distances below this; a conditioning frame's may be any). */
    private static final int CACHED_DISTANCES = 64;
    /** Graphs kept: an object's memory fills over its first frames, then its shapes repeat. */
    static final int MAX_GRAPHS = 32;

    private final Sam3TrackerConfig config;
    private final Sam3TrackerModel cpu;
    private final GpuWorkspace gpu;
    private final CudaStream stream;
    private final PinnedBuffer staging;
    private final CudaMemoryAttention attention;
    private final TrackerMemoryEncoder encoder;
    private final CudaSam2MaskDecoder decoder;
    private final Sam2Kernels ops;
    /** Frames' features made on the device ({@link #features}). */
    private final TrackerFeatures frames;
    private final DeviceBuffer top, s0, s1, frameOfSet, memory, memoryPos, spatialPos, copyTable;
    /** A mask prompt's dense embedding [grid², hidden] bf16 ({@link #pointerFromMask}). */
    private final DeviceBuffer dense;
    private final int maxMemory, maxSpatial, maxPointerTokens;
    private final long featureBytes;
    /**
     * The staging buffer during {@link #propagateAll}: per object of a run its inputs ({@code inputStride}: the copy
     * table, then the pointer rows, then their positions, each at a fixed offset), then per object its results
     * ({@code resultStride}); {@code runObjects} objects fit.
     */
    private final long tableStride, rowStride, inputStride, resultStride;
    private final int runObjects;
    private final MemoryBank bank;
    /** Pointer positions by distance for {@link #cachedWindow}. */
    private final float[][] pointerPosCache = new float[CACHED_DISTANCES][];
    private int cachedWindow = -1;
    private long uploadedMemories;
    private final GraphCache graphs = new GraphCache("SAM 3 tracker", MAX_GRAPHS);
    /** The frame whose features are on the device (none, when its upload did not finish). */
    private WeakReference<TrackerFrame> uploaded = new WeakReference<>(null);
    private boolean closed;

    /** The factory a {@code Sam3VideoModel} takes: the tracker's passes on GPU {@code ordinal}, the default bank. */
    public static TrackerPasses.Factory factory(int ordinal) {
        return (checkpoint, config, cpu) -> open(checkpoint, config, cpu, ordinal);
    }

    /** As above with a bank of {@code slots} memories (0: every memory kept on the host). */
    public static TrackerPasses.Factory factory(int ordinal, int slots) {
        return (checkpoint, config, cpu) -> open(checkpoint, config, cpu, ordinal, slots);
    }

    /** Memories one object holds at most between two frames: its conditioning ones, what a frame reads, the new one. */
    public static int slotsPerObject(Sam3TrackerConfig c) {
        return Sam3TrackerConfig.MAX_CONDITIONING_FRAMES + c.numMaskmem() + 1;
    }

    /** The default bank: {@value #DEFAULT_BANK_OBJECTS} objects of {@link #slotsPerObject} memories. */
    public static int defaultSlots(Sam3TrackerConfig c) {
        return DEFAULT_BANK_OBJECTS * slotsPerObject(c);
    }

    /**
     * Opens GPU {@code ordinal} and uploads the parts' weights from {@code checkpoint} (sam3.pt); {@code cpu} is the
     * same checkpoint's CPU tracker (the memory inputs, the mask-prompt pointers). A configuration the kernels cannot
     * run is an {@link IllegalArgumentException} naming what ({@link TrackerSizes#unsupported}), before any GPU work.
     * The bank holds {@link #defaultSlots} memories.
     */
    public static CudaSam3Tracker open(StateDict checkpoint, Sam3TrackerConfig config, Sam3TrackerModel cpu,
            int ordinal) {
        return open(checkpoint, config, cpu, ordinal, defaultSlots(config));
    }

    /** As above with a bank of {@code slots} memories (0: every memory kept on the host, as a test wants it). */
    public static CudaSam3Tracker open(StateDict checkpoint, Sam3TrackerConfig config, Sam3TrackerModel cpu,
            int ordinal, int slots) {
        TrackerSizes.checkSupported(config);
        if (slots < 0) {
            throw new IllegalArgumentException("a bank of " + slots + " memories");
        }
        StateDict sd = Sam3Checkpoint.tracker(checkpoint);
        GpuWorkspace gpu = GpuWorkspace.open(ordinal, STAGING_BYTES, TrackerSizes.poolBytes(config, slots),
                "SAM 3 tracker");
        try {
            return new CudaSam3Tracker(sd, config, cpu, gpu, slots);
        } catch (RuntimeException e) {
            gpu.close();
            throw e;
        }
    }

    /** The parts and their input buffers in {@code gpu}'s pool; the decoder last, as it alone holds host resources. */
    private CudaSam3Tracker(StateDict sd, Sam3TrackerConfig config, Sam3TrackerModel cpu, GpuWorkspace gpu,
            int slotCount) {
        this.config = config;
        this.cpu = cpu;
        this.gpu = gpu;
        this.stream = gpu.stream();
        this.staging = gpu.staging();
        this.maxMemory = TrackerSizes.maxMemory(config);
        this.maxSpatial = TrackerSizes.maxSpatial(config);
        int split = config.hidden() / config.memDim();
        this.maxPointerTokens = (Sam3TrackerConfig.MAX_CONDITIONING_FRAMES + Sam3TrackerConfig.MAX_OBJECT_POINTERS - 1)
                * split;
        this.tableStride = align(2L * maxSpatial * Sam2Kernels.SPAN_BYTES);
        this.rowStride = align((long) maxPointerTokens * config.memDim() * 2);
        this.inputStride = tableStride + 2 * rowStride;
        this.resultStride = align((long) config.lowResSize() * config.lowResSize() * 4 + 8 + config.hidden() * 2L);
        this.runObjects = (int) Math.max(1, Math.min(1024, staging.bytes() / (inputStride + resultStride)));
        Sam2Config parts = config.sam2Parts();
        CudaKernels kernels = gpu.kernels();
        this.ops = Sam2Kernels.of(kernels);
        DeviceMemoryPool p = gpu.pool();
        int g = config.grid(), c = config.hidden();
        this.top = p.allocateBf16((long) g * g * c, "SAM 3 tracker features");
        this.s0 = p.allocateBf16(16L * g * g * (c / 8), "SAM 3 tracker conv_s0 features");
        this.s1 = p.allocateBf16(4L * g * g * (c / 4), "SAM 3 tracker conv_s1 features");
        this.frameOfSet = p.allocate(4, "SAM 3 tracker frame of the object");
        this.dense = p.allocateBf16((long) g * g * c, "SAM 3 tracker mask prompt");
        this.memory = p.allocateBf16((long) maxMemory * config.memDim(), "SAM 3 tracker memory");
        this.memoryPos = p.allocateBf16((long) maxMemory * config.memDim(), "SAM 3 tracker memory position");
        this.featureBytes = (long) g * g * config.memDim() * 2;
        this.bank = new MemoryBank(this, slotCount, g * g * config.memDim(), stream, staging, p);
        this.spatialPos = p.allocate(config.numMaskmem() * featureBytes, "SAM 3 tracker memory positions by slot");
        this.copyTable = p.allocate(2L * maxSpatial * Sam2Kernels.SPAN_BYTES, "SAM 3 tracker memory copy table");
        this.frames = new TrackerFeatures(sd, config, cpu, kernels, stream, staging, p, this);
        stream.fill16(frameOfSet, (short) 0);   // int 0: every pass reads the one frame's s0 / s1
        for (int slot = 0; slot < config.numMaskmem(); slot++) {
            StagedCopy.uploadBf16(stream, staging, cpu.spatialPosition(slot),
                    spatialPos.slice(slot * featureBytes, featureBytes, "memory position of slot " + slot));
        }
        this.attention = new CudaMemoryAttention(sd, parts, 1, maxMemory, kernels, stream, p, staging);
        this.encoder = new TrackerMemoryEncoder(sd, config, kernels, stream, p, staging, graphs, bank);
        this.decoder = new CudaSam2MaskDecoder(sd, parts, 1, kernels, stream, p, staging);
    }

    private static long align(long bytes) {
        return BumpAllocator.alignUp(Math.max(bytes, 1));
    }

    @Override
    public Sam3TrackerConfig config() {
        return config;
    }

    /**
     * As {@link Sam3TrackerModel#features}: on the device when the levels are a {@link CudaSam3} tracker neck's still in
     * their slots on this GPU ({@link TrackerFeatures}), else the CPU reference's convolutions on their values.
     */
    @Override
    public TrackerFrame features(CpuThreadPool pool, FeatureMap[] levels) {
        int g = config.grid(), c = config.hidden();
        long[] want = {16L * g * g * c, 4L * g * g * c, (long) g * g * c};
        if (levels.length != 3) {
            throw new IllegalArgumentException(levels.length + " tracker levels; 3 expected (4x, 2x, 1x)");
        }
        for (int i = 0; i < 3; i++) {
            if (levels[i].length() != want[i]) {
                throw new IllegalArgumentException("tracker level " + (4 >> i) + "x of " + levels[i].length()
                        + " values; " + want[i] + " expected (grid " + g + ", width " + c + ")");
            }
        }
        synchronized (this) {
            ensureOpen();
            TrackerFrame made = frames.make(levels);
            if (made != null) {
                return made;
            }
        }
        return TrackerFrame.of(cpu.features(pool, FeatureMap.values(levels)));
    }

    /**
     * As {@link Sam3TrackerModel#propagate}, step for step:
     * <ul>
     *   <li>memory attention: the same memory and positions as {@link Sam3TrackerModel#memoryInputs} (bf16), put
     *       together on the device (the class comment); the frame's features plus 0.1 x their sine position, which
     *       {@link CudaMemoryAttention} makes from the same encoding at the grid (its feature size, mask size / 16);
     *       the pointer tokens at the end, not rotated;</li>
     *   <li>decoder without prompts ({@link CudaSam2MaskDecoder#stageNoPrompts}: a point labelled -1 and the padding
     *       point, both {@code not_a_point_embed} whatever their place, as the CPU's padding point), the dense prompt
     *       {@code no_mask_embed}, the conv_s0 / conv_s1 features of the frame;</li>
     *   <li>the choice (multimask): the best sigmoid IoU of masks 1..3, ties to the lower one
     *       ({@code Sam2MaskDecoder.argmax}); present when the object score is above 0 (NaN: absent); absent, the mask
     *       all {@link Sam3TrackerModel#NO_OBJECT_SCORE} and the pointer {@code no_obj_ptr}, else {@code
     *       obj_ptr_proj} of the chosen mask's token.</li>
     * </ul>
     * What differs: the image side in bf16 (fp32 accumulation), and the pointer comes back rounded to bf16 (the CPU's
     * is fp32; as memory it is rounded to bf16 on its way up anyway). A memory of this tracker's bank is read in place;
     * any other (spilled to the host, the CPU's, another GPU's) is uploaded from its values. Reading a memory that
     * was released is an {@link IllegalStateException}.
     */
    @Override
    public Propagation propagate(CpuThreadPool pool, TrackerFrame f, List<Sam3TrackerModel.Spatial> spatial,
            List<Sam3TrackerModel.Pointer> pointers, int pointerWindow) {
        return propagateAll(pool, f, List.of(new Sam3TrackerModel.Reads(spatial, pointers)), pointerWindow).get(0);
    }

    /**
     * {@link #propagate} for each object, queued one after the other without waiting between them: each object's
     * small inputs (copy table, pointer rows) go up from their own place in the staging buffer and its results come
     * back to their own place, so the host waits once for a run of objects (as many as the staging buffer holds), not
     * once per object. An object that reads a memory from outside the bank starts a new run (its memories' upload
     * waits, and uses the staging buffer). Every object is checked before any GPU work; the results in order.
     */
    @Override
    public List<Propagation> propagateAll(CpuThreadPool pool, TrackerFrame f, List<Sam3TrackerModel.Reads> objects,
            int pointerWindow) {
        // values of memories not in this bank, fetched before this tracker's lock (another GPU's take its own)
        float[][][] elsewhere = new float[objects.size()][][];
        for (int j = 0; j < objects.size(); j++) {
            List<Sam3TrackerModel.Spatial> spatial = objects.get(j).spatial();
            for (int i = 0; i < spatial.size(); i++) {
                FeatureMap mem = spatial.get(i).features();
                if (!bank.owns(mem)) {
                    if (elsewhere[j] == null) {
                        elsewhere[j] = new float[spatial.size()][];
                    }
                    elsewhere[j][i] = mem.values();
                }
            }
        }
        synchronized (this) {
            ensureOpen();
            for (Sam3TrackerModel.Reads r : objects) {
                check(r);
            }
            List<Propagation> out = new ArrayList<>(objects.size());
            if (objects.isEmpty()) {
                return out;
            }
            upload(f);
            int queued = 0;
            for (int j = 0; j < objects.size(); j++) {
                if (queued > 0 && (queued == runObjects || elsewhere[j] != null)) {
                    collect(queued, out);
                    queued = 0;
                }
                queue(pool, objects.get(j), elsewhere[j], queued, pointerWindow);
                queued++;
            }
            collect(queued, out);
            return out;
        }
    }

    /** What one object reads, checked against what the buffers hold; a released memory refused. */
    private void check(Sam3TrackerModel.Reads r) {
        int n = config.grid() * config.grid(), md = config.memDim(), c = config.hidden(), split = c / md;
        List<Sam3TrackerModel.Spatial> spatial = r.spatial();
        int pointerTokens = r.pointers().size() * split;
        int m = spatial.size() * n + pointerTokens;
        if (m == 0) {
            throw new IllegalStateException("a tracked frame with no memory: an object starts on a conditioning frame");
        }
        if (m > maxMemory || spatial.size() > maxSpatial || pointerTokens > maxPointerTokens) {
            throw new IllegalArgumentException("memory of " + m + " tokens (" + spatial.size() + " memories, "
                    + r.pointers().size() + " pointers); the GPU tracker holds " + maxMemory + " (" + maxSpatial
                    + " memories, " + maxPointerTokens / split + " pointers)");
        }
        for (Sam3TrackerModel.Spatial sp : spatial) {
            if (sp.slot() < 0 || sp.slot() >= config.numMaskmem() || sp.features().length() != n * md) {
                throw new IllegalArgumentException("a memory of " + sp.features().length() + " values in temporal slot "
                        + sp.slot() + "; " + n + " x " + md + " in 0.." + (config.numMaskmem() - 1) + " expected");
            }
            if (sp.features() instanceof DeviceMemory d && bank.owns(d) && !bank.holds(d)) {
                throw new IllegalStateException("a released memory is read (" + d + ")");
            }
        }
        for (Sam3TrackerModel.Pointer p : r.pointers()) {
            if (p.pointer().length != c) {
                throw new IllegalArgumentException("a pointer of " + p.pointer().length + " values; " + c + " expected");
            }
        }
    }

    /**
     * Queues one object's pass as the {@code place}-th of a run: its memories from outside the bank uploaded (waits;
     * only as a run's first), its copy table and pointer rows staged at its place and uploaded, the graph, and its
     * results' download to its place.
     */
    private void queue(CpuThreadPool pool, Sam3TrackerModel.Reads r, float[][] elsewhere, int place,
            int pointerWindow) {
        int n = config.grid() * config.grid(), md = config.memDim(), split = config.hidden() / md;
        List<Sam3TrackerModel.Spatial> spatial = r.spatial();
        List<Sam3TrackerModel.Pointer> pointers = r.pointers();
        int spatialTokens = spatial.size() * n, pointerTokens = pointers.size() * split;
        int m = spatialTokens + pointerTokens;
        if (elsewhere != null) {
            if (place != 0) {
                throw new IllegalStateException("memories from outside the bank in the middle of a run");
            }
            for (int i = 0; i < spatial.size(); i++) {
                if (elsewhere[i] != null) {
                    StagedCopy.uploadBf16(stream, staging, elsewhere[i], memory.slice(i * featureBytes, featureBytes,
                            "memory " + i));
                    uploadedMemories++;
                }
            }
        }
        long in = (long) place * inputStride;
        ByteBuffer table = staging.buffer();
        table.position(Math.toIntExact(in));
        int spans = 0;
        for (int i = 0; i < spatial.size(); i++) {
            Sam3TrackerModel.Spatial sp = spatial.get(i);
            if (elsewhere == null || elsewhere[i] == null) {
                DeviceMemory d = (DeviceMemory) sp.features();
                Sam2Kernels.putSpan(table, bank.address(d.slot()),
                        memory.address() + i * featureBytes, featureBytes);
                spans++;
            }
            Sam2Kernels.putSpan(table, spatialPos.address() + sp.slot() * featureBytes,
                    memoryPos.address() + i * featureBytes, featureBytes);
            spans++;
        }
        long tableBytes = (long) spans * Sam2Kernels.SPAN_BYTES;
        long rowsAt = in + tableStride, posAt = rowsAt + rowStride;
        long rowBytes = (long) pointerTokens * md * 2;
        for (int i = 0; i < pointers.size(); i++) {
            float[] ptr = pointers.get(i).pointer();
            float[] enc = pointerPosition(pool, pointers.get(i).distance(), pointerWindow);
            for (int k = 0; k < split; k++) {
                long row = (long) i * split + k;
                staging.putBf16(rowsAt / 2 + row * md, ptr, k * md, md);
                staging.putBf16(posAt / 2 + row * md, enc, 0, md);
            }
        }
        if (spans > 0) {
            stream.upload(staging, in, copyTable, 0, tableBytes);
        }
        if (rowBytes > 0) {
            long at = (long) spatialTokens * md * 2;
            stream.upload(staging, rowsAt, memory, at, rowBytes);
            stream.upload(staging, posAt, memoryPos, at, rowBytes);
        }
        decoder.stageNoPrompts(1);
        int copies = spans;
        graphs.run(stream, List.of("propagate", m, pointerTokens, copies), () -> {
            if (copies > 0) {
                ops.copySpans(stream, copyTable, copies);
            }
            attention.forward(1, top, memory, memoryPos, m, pointerTokens);
            decoder.forward(1, 2, true, attention.output(), s0, s1, frameOfSet);
        });
        // the decoder's outputs of the object: low-res logits, object score, IoU (fp32), pointer (bf16)
        int l = config.lowResSize();
        long lowBytes = (long) l * l * 4, out = resultsAt() + (long) place * resultStride;
        stream.download(decoder.lowRes(), 0, staging, out, lowBytes);
        stream.download(decoder.objectScores(), 0, staging, out + lowBytes, 4);
        stream.download(decoder.ious(), 0, staging, out + lowBytes + 4, 4);
        stream.download(decoder.pointers(), 0, staging, out + lowBytes + 8, (long) config.hidden() * 2);
    }

    /** Where the results of a run go in the staging buffer: after the inputs of {@link #runObjects} objects. */
    private long resultsAt() {
        return (long) runObjects * inputStride;
    }

    /** Waits for the run of {@code count} objects queued and adds their results to {@code out}. */
    private void collect(int count, List<Propagation> out) {
        stream.synchronize();
        int l = config.lowResSize(), c = config.hidden();
        long lowBytes = (long) l * l * 4;
        for (int place = 0; place < count; place++) {
            long at = resultsAt() + (long) place * resultStride;
            ByteBuffer b = staging.buffer();
            b.position(Math.toIntExact(at));
            float[] lowRes = new float[l * l];
            b.asFloatBuffer().get(lowRes);
            float score = b.getFloat(Math.toIntExact(at + lowBytes));
            float iou = b.getFloat(Math.toIntExact(at + lowBytes + 4));
            out.add(new Propagation(lowRes, score, staging.getBf16((at + lowBytes + 8) / 2, c), iou));
        }
    }

    /** {@link Sam3TrackerModel#pointerPosition}, kept for the distances below {@value #CACHED_DISTANCES}. */
    private float[] pointerPosition(CpuThreadPool pool, int distance, int window) {
        if (window != cachedWindow) {
            java.util.Arrays.fill(pointerPosCache, null);
            cachedWindow = window;
        }
        if (distance < 0 || distance >= CACHED_DISTANCES) {
            return cpu.pointerPosition(pool, distance, window);
        }
        float[] enc = pointerPosCache[distance];
        if (enc == null) {
            enc = cpu.pointerPosition(pool, distance, window);
            pointerPosCache[distance] = enc;
        }
        return enc;
    }

    /**
     * As {@link Sam3TrackerModel#pointerFromMask}: the mask's dense prompt made on the host ({@link
     * Sam3TrackerModel#maskPromptEmbedding}: two small convolutions, [grid², hidden]) and uploaded (bf16), then the
     * decoder on the device against the frame's own features (no memory), one mask, the padding point as the only
     * sparse prompt; the pointer is {@code obj_ptr_proj} of mask token 0 when the object score is above 0, else
     * {@code no_obj_ptr} (an empty mask: {@code no_obj_ptr} without a pass). The host waits for the pointer. What
     * differs from the CPU: the image side in bf16, the pointer rounded to bf16, as {@link #propagate}'s.
     */
    @Override
    public float[] pointerFromMask(CpuThreadPool pool, TrackerFrame f, boolean[] mask) {
        int s = config.maskSize(), c = config.hidden();
        if (mask.length != s * s) {
            throw new IllegalArgumentException("mask of " + mask.length + " values; " + s + " x " + s + " expected");
        }
        if (Sam3TrackerModel.empty(mask)) {
            return cpu.noObjectPointer();
        }
        float[] prompt = cpu.maskPromptEmbedding(pool, mask);   // host work, outside the lock
        synchronized (this) {
            ensureOpen();
            upload(f);
            StagedCopy.uploadBf16(stream, staging, prompt, dense);
            decoder.stageNoPrompts(1);
            graphs.run(stream, List.of("pointer from mask"), () -> decoder.forward(1, 2, false, top, dense, s0, s1,
                    frameOfSet));
            stream.download(decoder.objectScores(), 0, staging, 0, 4);
            stream.download(decoder.pointers(), 0, staging, 8, (long) c * 2);
            stream.synchronize();
            return staging.buffer().getFloat(0) > 0 ? staging.getBf16(4, c) : cpu.noObjectPointer();
        }
    }

    /**
     * As {@link Sam3TrackerModel#encodeMemory}: the memory encoder on {@code scaledMask} ([maskSize²], already
     * scaled) and the frame's features, plus {@code no_obj_embed_spatial} when absent, bf16 (the output is rounded
     * before that sum, the CPU's after it). The memory stays on the device: copied into a free slot of the bank and
     * handed out as a handle (nothing waits for the device); with every slot taken, downloaded and handed out as a
     * host memory ({@link TrackerMemoryEncoder}, {@link MemoryBank}).
     */
    @Override
    public synchronized FeatureMap encodeMemory(CpuThreadPool pool, TrackerFrame f, float[] scaledMask,
            boolean present) {
        ensureOpen();
        int s = config.maskSize();
        if (scaledMask.length != s * s) {
            throw new IllegalArgumentException("scaled mask of " + scaledMask.length + " values; " + s + " x " + s
                    + " expected");
        }
        upload(f);
        return encoder.fromScaledMask(top, scaledMask, present);
    }

    /**
     * As {@link TrackerPasses#encodeTrackedMemories}, on the device from the objects' low-resolution masks ({@link
     * TrackerMemoryEncoder#fromLowResolution}): the host waits only for their upload. More than {@link
     * Sam2Kernels#SHRINK_MAX_OBJECTS} objects: the host's rule, then {@link #encodeMemory}.
     */
    @Override
    public synchronized List<FeatureMap> encodeTrackedMemories(CpuThreadPool pool, TrackerFrame f, float[][] lowRes,
            boolean[] wanted) {
        ensureOpen();
        int n = lowRes.length, l = config.lowResSize();
        if (wanted.length != n) {
            throw new IllegalArgumentException(wanted.length + " wanted flags for " + n + " masks");
        }
        for (float[] m : lowRes) {
            if (m.length != l * l) {
                throw new IllegalArgumentException("low-resolution mask of " + m.length + " values; " + l + " x " + l
                        + " expected");
            }
        }
        if (n > Sam2Kernels.SHRINK_MAX_OBJECTS) {
            return TrackerPasses.super.encodeTrackedMemories(pool, f, lowRes, wanted);
        }
        upload(f);
        return encoder.fromLowResolution(top, lowRes, wanted);
    }

    /** A handle's values, downloaded (the device waits). */
    synchronized float[] download(DeviceMemory d) {
        ensureOpen();
        return bank.download(d);
    }

    /** A handle's slot back to the bank (the bank's lock only: a release never waits for a pass). */
    void release(DeviceMemory d) {
        bank.release(d);
    }

    /** Memories the bank holds at most. */
    public int bankSlots() {
        return bank.capacity();
    }

    /** Memories in the bank now (released ones not counted; collected unreleased ones until reclaimed). */
    public int bankSlotsTaken() {
        return bank.taken();
    }

    /** Memories handed out as host ones so far because the bank was full. */
    public synchronized long spilledMemories() {
        return bank.spilled();
    }

    /** Memories {@link #propagate} uploaded so far because they were not in the bank. */
    public synchronized long uploadedMemories() {
        return uploadedMemories;
    }

    /**
     * The frame's features into the buffers the passes read, unless they are there already: copied from this tracker's
     * frame slot, or uploaded (bf16) from the CPU's values.
     */
    private void upload(TrackerFrame frame) {
        if (uploaded.get() == frame) {
            return;
        }
        uploaded = new WeakReference<>(null);
        if (!frames.copy(frame, top, s0, s1)) {
            FrameFeatures f = frame.host();
            int g = config.grid(), c = config.hidden();
            if (f.side() != g || f.top().length != g * g * c || f.s0().length != 16 * g * g * (c / 8)
                    || f.s1().length != 4 * g * g * (c / 4)) {
                throw new IllegalArgumentException("frame features of side " + f.side() + " (" + f.top().length
                        + ", " + f.s0().length + ", " + f.s1().length + " values); the tracker's grid is " + g
                        + " at width " + c);
            }
            StagedCopy.uploadBf16(stream, staging, f.top(), top);
            StagedCopy.uploadBf16(stream, staging, f.s0(), s0);
            StagedCopy.uploadBf16(stream, staging, f.s1(), s1);
        }
        uploaded = new WeakReference<>(frame);
    }

    /** "memory attention, mask decoder and memory encoder on GPU name (bf16); ..." for logs and masks.json. */
    @Override
    public String describe() {
        return "memory attention, mask decoder and memory encoder on " + gpu.context().info().describe()
                + " (bf16), memories in a device bank of " + bank.capacity();
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the CUDA SAM 3 tracker is closed");
        }
    }

    /**
     * Frees the graphs, the decoder's staging and the GPU workspace (the bank with it: handles still held read as
     * released); the CPU model stays the caller's.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        bank.close();
        try {
            graphs.close();
            decoder.close();
        } finally {
            gpu.close();
        }
    }
}
