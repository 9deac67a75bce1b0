package io.samstream.gpu.cuda.sam2;

import static io.samstream.gpu.cuda.sam2.PassInputs.slice;
import static io.samstream.gpu.cuda.sam2.PassInputs.span;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cuda.Bf16;
import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.GraphCache;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.kernels.EncoderOpsKernels;
import io.samstream.gpu.cuda.kernels.Sam2Kernels;
import io.samstream.gpu.sam2.MemoryReadout;
import io.samstream.gpu.sam2.ObjectPrompt;
import io.samstream.gpu.sam2.ObjectResult;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Model;
import io.samstream.gpu.sam2.Sam2Tracking;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * SAM 2.1 video tracking on one GPU with the whole step on the device, batched over streams and objects: what
 * {@link io.samstream.gpu.sam2.Sam2VideoTracker} computes on the CPU, with the same semantics (objects prompted on a
 * frame start afresh, tracked objects read their bank's conditioning frame, last 6 frames' memories and last 15
 * frames' pointers, {@link MemoryReadout}).
 *
 * <p>One {@link #step} takes frames of several streams, and of a stream several consecutive frames (a video file or
 * a backlog: the image encoder, which reads no memory, runs batched over them). The frames go through the image
 * encoder together ({@code maxFrames} per pass); then, round by round (a stream's first frame of the step, its second,
 * ...), all their tracked objects with the same memory length go through one pass of gather → memory attention →
 * mask decoder → memory encoder → store ({@code maxObjects} per pass), and the prompted objects through one pass per
 * prompt shape; a round reads the memories the round before stored. Each pass is one CUDA graph replay: its inputs are a copy table (which bank slots
 * feed which memory rows, which new memory goes to which slot) and a few small arrays uploaded before the replay; only
 * the chosen low-resolution masks, scores, IoUs and pointers come back.
 *
 * <p><b>Pipelining.</b> The host never waits for the GPU between passes: each pass stages its inputs and receives its
 * results in a slot of a {@link PassRing}, read when the slot comes round again or at the step's end. The image
 * encoder runs on a stream of its own into one of two sets of buffers ({@link EncoderSides}): while the objects of
 * one encoder pass's frames run, the next encoder pass (its frames copied in, encoded) runs beside them.
 *
 * <p><b>Banks.</b> Every object tracked holds a fixed bank in device memory: its conditioning memory and pointer, a ring
 * of {@code numMaskmem - 1} memories and one of 15 pointers, written in place frame after frame: memory per object is
 * constant over an endless stream ({@link #bankBytesPerObject}). At most {@code maxBanks} objects over all streams.
 * Not thread-safe beyond {@link #step}'s lock.
 */
public final class CudaSam2Tracker implements Sam2Tracking {
    /** How much one tracker takes: frames per encoder pass, objects per pass, objects tracked in all. */
    public record Limits(int maxFrames, int maxObjects, int maxBanks) {
        public Limits {
            if (maxFrames < 1 || maxObjects < 1 || maxBanks < 1) {
                throw new IllegalArgumentException("tracker limits must be at least 1: " + maxFrames + " frames, "
                        + maxObjects + " objects per pass, " + maxBanks + " objects");
            }
        }
    }

    /**
     * A stream's next frame and its prompts. {@code rgb}: 8-bit RGB at the model's input size, row-major. A stream's
     * second request in one {@link #step} is its frame after the first's, and so on.
     */
    public record Request(Stream stream, byte[] rgb, List<ObjectPrompt> prompts) {}

    private static final int MAX_GRAPHS = 128;
    /** Pinned bytes the passes in flight may take (at least two passes, at most eight). */
    private static final long RING_BUDGET = 128L << 20;
    private static final int POINTERS = Sam2Config.MAX_OBJECT_POINTERS;

    private final Sam2Config config;
    private final Limits limits;
    private final CudaContext context;
    private final CudaKernels kernels;
    private final Sam2Kernels ops;
    private final EncoderOpsKernels encoderOps;
    private final CudaStream stream;
    private final DeviceMemoryPool pool;
    private final PinnedBuffer io;
    private final PassRing inFlight;
    private final PassResults outputs;
    private final CpuThreadPool cpu;
    private final MemoryReadout readout;
    private final EncoderSides encoder;
    private final CudaMemoryAttention memoryAttention;
    private final CudaSam2MaskDecoder maskDecoder;
    private final CudaMemoryEncoder memoryEncoder;
    private final GraphCache graphs = new GraphCache("SAM 2 step", MAX_GRAPHS);
    private final int s, t, c, memDim, l, split, maxMemory, ring;
    private final long featureBytes, pointerBytes, bankBytes;
    private final DeviceBank.Layout bankLayout;
    private final PassInputs inputs;
    private final DeviceBuffer curr, image, memory, memoryPos, gatherTable, storeTable, pointerPos, frameOfSet,
            noMemEmbed, spatialPos, banks;
    private final float[][] pointerPosCache = new float[POINTERS][];
    private final Deque<Integer> freeBanks = new ArrayDeque<>();
    private boolean closed;

    /** One stream's objects and frame counter; made by {@link #openStream}. */
    public final class Stream implements Sam2Tracking.StreamTracker {
        private final Map<Integer, DeviceBank> banksById = new LinkedHashMap<>();
        private int frame;

        private Stream() {}

        private CudaSam2Tracker owner() {
            return CudaSam2Tracker.this;
        }

        /** The index the next frame gets (0 for the first). */
        public int nextFrame() {
            return frame;
        }

        @Override
        public Set<Integer> objects() {
            return Collections.unmodifiableSet(banksById.keySet());
        }

        /** This stream's next frame alone ({@link #step} with one request). */
        @Override
        public List<ObjectResult> track(byte[] rgb, List<ObjectPrompt> prompts) {
            return step(List.of(new Request(this, rgb, prompts))).get(0);
        }

        /** Stops tracking an object; its bank is free again. */
        @Override
        public void remove(int objectId) {
            synchronized (CudaSam2Tracker.this) {
                DeviceBank b = banksById.remove(objectId);
                if (b != null) {
                    freeBanks.push(b.slot);
                }
            }
        }

        /** Stops tracking every object of the stream. */
        @Override
        public void close() {
            for (Integer id : new ArrayList<>(banksById.keySet())) {
                remove(id);
            }
        }
    }

    /** One object of a pass: its frame's slot in the encoder pass, the stream, id, bank (null: new). */
    private record Work(int frameIndex, Stream stream, int objectId, DeviceBank bank, ObjectPrompt prompt, int frame) {}

    /** Where a result goes: request {@code request}'s list, in the order these are made. */
    private record Placed(int request, Work work) {}

    /**
     * Opens GPU {@code ordinal} and uploads the model's weights; a configuration the kernels cannot run is an
     * {@link IllegalArgumentException} naming what, before any GPU work.
     */
    public static CudaSam2Tracker open(StateDict sd, Sam2Config config, int ordinal, Limits limits) {
        List<String> problems = new ArrayList<>(CudaSam2Offload.unsupported(config));
        String decoder = CudaSam2MaskDecoder.unsupported(config);
        if (decoder != null) {
            problems.add(decoder);
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("the CUDA SAM 2.1 tracker cannot run " + config + ": "
                    + String.join("; ", problems));
        }
        CudaContext context = CudaContext.open(ordinal);
        try {
            return new CudaSam2Tracker(sd, config, limits, context);
        } catch (RuntimeException e) {
            context.close();
            throw e;
        }
    }

    private CudaSam2Tracker(StateDict sd, Sam2Config config, Limits limits, CudaContext context) {
        this.config = config;
        this.limits = limits;
        this.context = context;
        this.s = config.imageSize();
        int f = config.featureSize();
        this.t = f * f;
        this.c = config.hidden();
        this.memDim = config.memDim();
        this.l = config.lowResSize();
        this.split = c / memDim;
        this.ring = config.numMaskmem() - 1;
        this.maxMemory = config.numMaskmem() * t + POINTERS * split;
        this.featureBytes = (long) t * memDim * 2;
        this.pointerBytes = (long) c * 2;
        this.bankBytes = (ring + 1) * featureBytes + POINTERS * pointerBytes;
        int n = limits.maxObjects();
        int spansPerObject = 1 + 2 * config.numMaskmem() + 2 * POINTERS;
        long inputBytes = PassInputs.bytes(n, config.numMaskmem(), split, memDim);
        long resultBytes = PassResults.bytes(n, l, c);
        int slots = PassRing.slots(inputBytes, resultBytes, RING_BUDGET);
        this.kernels = new CudaKernels(context);
        List<AutoCloseable> opened = new ArrayList<>();
        try {
            this.ops = Sam2Kernels.of(kernels);
            this.encoderOps = EncoderOpsKernels.of(kernels);
            this.stream = add(opened, new CudaStream(context));
            // before the first pass, the weights' uploads are staged here too
            this.io = add(opened, new PinnedBuffer(context, Math.max(PassRing.bytes(slots, inputBytes, resultBytes),
                    64L << 20), "SAM 2 step inputs and results"));
            this.inFlight = add(opened, new PassRing(context, io, slots, inputBytes, resultBytes));
            this.pool = add(opened, new DeviceMemoryPool(context, poolBytes(config, limits)));
            this.cpu = add(opened, new CpuThreadPool(1));
            this.readout = new MemoryReadout(sd, config);
            this.encoder = add(opened, new EncoderSides(sd, config, limits.maxFrames(), context, kernels, pool, io,
                    graphs));
            this.memoryAttention = new CudaMemoryAttention(sd, config, n, maxMemory, kernels, stream, pool, io);
            this.maskDecoder = add(opened, new CudaSam2MaskDecoder(sd, config, n, kernels, stream, pool, io));
            this.outputs = new PassResults(maskDecoder, io, l, c);
            this.memoryEncoder = new CudaMemoryEncoder(sd, config, n, kernels, stream, pool, io);
            DeviceWeights up = new DeviceWeights(pool, stream, io);
            this.noMemEmbed = up.bf16(sd.get("no_mem_embed", 1, 1, c).data(), "no_mem_embed");
            float[] positions = new float[config.numMaskmem() * t * memDim];
            for (int slot = 0; slot < config.numMaskmem(); slot++) {
                System.arraycopy(readout.spatialPosition(slot), 0, positions, slot * t * memDim, t * memDim);
            }
            this.spatialPos = up.bf16(positions, "memory positions by temporal slot");
            this.curr = pool.allocateBf16((long) n * t * c, "objects' frame features");
            this.image = pool.allocateBf16((long) n * t * c, "prompted objects' features + no_mem_embed");
            this.memory = pool.allocateBf16((long) n * maxMemory * memDim, "objects' memories");
            this.memoryPos = pool.allocateBf16((long) n * maxMemory * memDim, "objects' memory positions");
            this.gatherTable = pool.allocate((long) n * spansPerObject * Sam2Kernels.SPAN_BYTES, "gather table");
            this.storeTable = pool.allocate((long) n * 2 * Sam2Kernels.SPAN_BYTES, "store table");
            this.pointerPos = pool.allocateBf16((long) n * POINTERS * split * memDim, "pointer positions");
            this.frameOfSet = pool.allocate((long) n * 4, "frame of each object");
            this.banks = pool.allocate(limits.maxBanks() * bankBytes, "memory banks");
            this.bankLayout = new DeviceBank.Layout(banks, ring, featureBytes, pointerBytes, bankBytes);
            this.inputs = new PassInputs(stream, io, gatherTable, storeTable, pointerPos, frameOfSet, n,
                    config.numMaskmem(), split, memDim);
            for (int i = limits.maxBanks() - 1; i >= 0; i--) {
                freeBanks.push(i);
            }
            stream.synchronize();
        } catch (RuntimeException e) {
            graphs.close();
            for (int i = opened.size() - 1; i >= 0; i--) {
                try {
                    opened.get(i).close();
                } catch (Exception ignored) {
                    // closing what was opened; the first failure is the one reported
                }
            }
            kernels.close();
            throw e;
        }
    }

    private static <T extends AutoCloseable> T add(List<AutoCloseable> opened, T r) {
        opened.add(r);
        return r;
    }

    /**
     * Device bytes for the parts at these limits, generously (bump allocation; nothing is freed): the encoder's
     * activations per frame, the memory attention's and decoder's per object, the inputs, the banks and the weights.
     */
    static long poolBytes(Sam2Config config, Limits limits) {
        long s = config.imageSize(), c = config.hidden(), md = config.memDim();
        long t = (long) config.featureSize() * config.featureSize();
        long maxMemory = config.numMaskmem() * t + (long) POINTERS * (c / md);
        long perFrame = 96 * s * s * 4 + EncoderSides.sideBytesPerFrame(config);
        long perObject = maxMemory * (2 * c + 3 * md) * 2 + t * (8 * c + config.memAttnFfn()) * 2
                + (long) Sam2Kernels.MAX_SPLITS * t * (c * 4 + 8)              // memory attention
                + 8 * s * s * 4                                                // memory encoder
                + 2 * t * c * 2 + 2 * maxMemory * md * 2 + 64 * 1024;          // inputs, tables
        long bank = (config.numMaskmem() * t * md + (long) POINTERS * c) * 2;
        return limits.maxFrames() * perFrame + limits.maxObjects() * perObject + limits.maxBanks() * bank
                + CudaSam2MaskDecoder.poolBytes(config, limits.maxObjects())
                + config.numMaskmem() * t * md * 2 + (768L << 20);           // + the other weights
    }

    @Override
    public Sam2Config config() {
        return config;
    }

    /** Opens a stream's state. */
    @Override
    public Stream openStream() {
        return new Stream();
    }

    /** Device bytes each tracked object holds, whatever the stream's length. */
    public long bankBytesPerObject() {
        return bankBytes;
    }

    /** Device bytes the tracker reserved (weights, activations at its limits, banks). */
    public long deviceBytes() {
        return pool.capacity();
    }

    public CudaContext context() {
        return context;
    }

    public Limits limits() {
        return limits;
    }

    @Override
    public String describe() {
        return "CUDA " + context.info().describe() + " (bf16, the whole SAM 2.1 step on the device)";
    }

    @Override
    public boolean batches() {
        return true;
    }

    /**
     * {@link #step} for streams opened here: all of them in one step; a stream listed several times gives its
     * consecutive frames in list order.
     */
    @Override
    public List<List<ObjectResult>> track(List<Sam2Tracking.StreamTracker> streams, List<byte[]> frames,
                                          List<List<ObjectPrompt>> prompts) {
        List<Request> requests = new ArrayList<>(streams.size());
        for (int i = 0; i < streams.size(); i++) {
            if (!(streams.get(i) instanceof Stream st) || st.owner() != this) {
                throw new IllegalArgumentException("request " + i + " of the step: a stream of another tracker");
            }
            requests.add(new Request(st, frames.get(i), prompts.get(i)));
        }
        return step(requests);
    }

    /**
     * Tracks every object of each request's stream on its next frame and adds the prompted ones; per request (in
     * request order) its results, tracked objects in the order they were added, then the prompted ones.
     *
     * <p>A stream may come several times: its requests are its consecutive frames in list order (its k-th request is
     * its k-th frame from now; prompts apply on the frame of their request). All frames go through the image encoder
     * together ({@code maxFrames} a pass); the objects then run in rounds, round r being the r-th request of every
     * stream that has one, each round as a step of those requests alone would run it (chunks of {@code maxFrames}
     * requests, the tracked objects by memory shape, then the prompted ones), so round r + 1 reads the memories round
     * r stored and the results are those of stepping the rounds one call after the other. Device memory stays at
     * {@code maxFrames} encoder slots: a pass encodes the frames of as many whole chunks as fit, those chunks' objects
     * run, then the next pass.
     *
     * <p>A bad request (no stream or one of another tracker, a frame of the wrong size, two prompts for one id on one
     * frame, a prompt the decoder cannot take, new objects of all requests together passing the object limit) is
     * refused before any stream moves on.
     */
    public synchronized List<List<ObjectResult>> step(List<Request> requests) {
        ensureOpen();
        for (int i = 0; i < requests.size(); i++) {
            Request r = requests.get(i);
            if (r == null || r.stream() == null) {
                throw new IllegalArgumentException("request " + i + " of the step has no stream");
            }
            if (r.stream().owner() != this) {
                throw new IllegalArgumentException("request " + i + " of the step: a stream of another tracker");
            }
            StepPlan.checkRequest(i, r.rgb(), s, r.prompts());
        }
        List<Stream> streams = new ArrayList<>();
        int[] streamOf = StepPlan.streamIndexes(requests.stream().map(Request::stream).toList(), streams);
        List<List<ObjectPrompt>> prompts = requests.stream().map(Request::prompts).toList();
        List<Set<Integer>> followed = new ArrayList<>();
        for (Stream st : streams) {
            followed.add(st.banksById.keySet());
        }
        int newBanks = StepPlan.newObjects(streamOf, followed, prompts);
        if (newBanks > freeBanks.size()) {
            throw new IllegalStateException("tracking " + (limits.maxBanks() - freeBanks.size()) + " objects, "
                    + newBanks + " more would pass the tracker's limit of " + limits.maxBanks());
        }
        List<StepPlan.Pass> passes = StepPlan.plan(streamOf, followed, prompts, limits.maxFrames());
        Map<Work, ObjectResult> results = new IdentityHashMap<>();
        List<Placed> placed = new ArrayList<>();
        try {
            int[] sides = new int[passes.size()];
            for (int p = 0; p < passes.size(); p++) {
                sides[p] = encoder.nextSide();
            }
            if (!passes.isEmpty()) {
                encode(requests, passes.get(0), sides[0]);
            }
            for (int p = 0; p < passes.size(); p++) {
                if (p + 1 < passes.size()) {
                    encode(requests, passes.get(p + 1), sides[p + 1]);   // runs beside this pass's objects
                }
                runObjects(requests, passes.get(p), sides[p], results, placed);
            }
            inFlight.drain();
        } catch (RuntimeException e) {
            inFlight.abandon();
            try {
                stream.synchronize();
                encoder.synchronize();
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
            throw e;
        }
        List<List<ObjectResult>> out = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
            out.add(new ArrayList<>());
        }
        for (Placed p : placed) {
            out.get(p.request()).add(results.get(p.work()));
        }
        return out;
    }

    /** Queues the encoder pass of a pass's frames (request indices; encoder slot j holds the j-th) on {@code side}. */
    private void encode(List<Request> requests, StepPlan.Pass pass, int side) {
        if (!pass.frames().isEmpty()) {
            encoder.encode(pass.frames().stream().map(i -> requests.get(i).rgb()).toList(), side);
        }
    }

    /** Queues the objects of a pass whose frames {@link #encode} queued on {@code side}, unit after unit. */
    private void runObjects(List<Request> requests, StepPlan.Pass pass, int side, Map<Work, ObjectResult> results,
                            List<Placed> placed) {
        List<Integer> frames = pass.frames();
        Map<Integer, Integer> slotOf = new java.util.HashMap<>();
        for (int j = 0; j < frames.size(); j++) {
            slotOf.put(frames.get(j), j);
        }
        if (!frames.isEmpty()) {
            encoder.awaitEncoded(stream, side);
        }
        for (List<Integer> unit : pass.units()) {
            runUnit(requests, unit, slotOf, side, results, placed);
        }
        if (!frames.isEmpty()) {
            encoder.markConsumed(stream, side);
        }
    }

    /** A unit's requests (one frame per stream) after their frames were encoded: the objects' passes. */
    private void runUnit(List<Request> requests, List<Integer> unit, Map<Integer, Integer> slotOf, int side,
                         Map<Work, ObjectResult> results, List<Placed> placed) {
        List<Work> tracked = new ArrayList<>();
        List<Work> prompted = new ArrayList<>();
        Map<Integer, Integer> requestOfSlot = new java.util.HashMap<>();
        for (int i : unit) {
            Request r = requests.get(i);
            Stream st = r.stream();
            int frame = st.frame++;
            for (ObjectPrompt p : r.prompts()) {
                st.remove(p.objectId());
            }
            if (st.banksById.isEmpty() && r.prompts().isEmpty()) {
                continue;    // no object to follow on this frame
            }
            Integer slot = slotOf.get(i);
            if (slot == null) {
                throw new IllegalStateException("request " + i + " has objects but its frame was not encoded");
            }
            requestOfSlot.put(slot, i);
            for (Map.Entry<Integer, DeviceBank> e : st.banksById.entrySet()) {
                tracked.add(new Work(slot, st, e.getKey(), e.getValue(), null, frame));
            }
            for (ObjectPrompt p : r.prompts()) {
                prompted.add(new Work(slot, st, p.objectId(), null, p, frame));
            }
        }
        // tracked objects, one pass per memory shape
        Map<List<Integer>, List<Work>> byShape = new LinkedHashMap<>();
        for (Work w : tracked) {
            byShape.computeIfAbsent(memoryShape(w), k -> new ArrayList<>()).add(w);
        }
        for (List<Work> group : byShape.values()) {
            for (List<Work> chunk : chunks(group)) {
                trackPass(chunk, side, results);
            }
        }
        // prompted objects, one pass per prompt shape
        Map<Integer, List<Work>> byPoints = new LinkedHashMap<>();
        for (Work w : prompted) {
            byPoints.computeIfAbsent(w.prompt().allPoints().length, k -> new ArrayList<>()).add(w);
        }
        for (List<Work> group : byPoints.values()) {
            for (List<Work> chunk : chunks(group)) {
                promptPass(chunk, side, results);
            }
        }
        for (Work w : tracked) {
            placed.add(new Placed(requestOfSlot.get(w.frameIndex()), w));
        }
        for (Work w : prompted) {
            placed.add(new Placed(requestOfSlot.get(w.frameIndex()), w));
        }
    }

    private List<List<Work>> chunks(List<Work> group) {
        List<List<Work>> out = new ArrayList<>();
        for (int from = 0; from < group.size(); from += limits.maxObjects()) {
            out.add(List.copyOf(group.subList(from, Math.min(group.size(), from + limits.maxObjects()))));
        }
        return out;
    }

    /** [memories, pointers] a tracked object reads on its frame. */
    private List<Integer> memoryShape(Work w) {
        DeviceBank bank = w.bank();
        List<Integer> cond = List.of(bank.conditioningFrame);
        return List.of(readout.spatial(cond, bank::hasFeatures, w.frame()).size(),
                readout.pointers(cond, bank::hasPointer, w.frame()).size());
    }

    /** Gather → memory attention → decoder (no prompt, several masks) → memory encoder → store, for one shape. */
    private void trackPass(List<Work> chunk, int side, Map<Work, ObjectResult> results) {
        int n = chunk.size();
        List<Integer> shape = memoryShape(chunk.get(0));
        int memories = shape.get(0), pointers = shape.get(1);
        int pointerTokens = pointers * split;
        int m = memories * t + pointerTokens;
        int slot = inFlight.acquire();
        long base = inFlight.inputsAt(slot);
        ByteBuffer in = io.buffer();
        ByteBuffer gather = slice(in, base);
        ByteBuffer store = slice(in, base + inputs.storeOffset());
        ByteBuffer ptrPos = slice(in, base + inputs.pointerPosOffset());
        ByteBuffer frames = slice(in, base + inputs.frameOffset());
        int gathers = 0;
        for (int j = 0; j < n; j++) {
            Work w = chunk.get(j);
            DeviceBank bank = w.bank();
            List<Integer> cond = List.of(bank.conditioningFrame);
            gathers += span(gather, encoder.top(side, w.frameIndex()), curr.address() + (long) j * t * c * 2,
                    (long) t * c * 2);
            long memBase = memory.address() + (long) j * m * memDim * 2;
            long posBase = memoryPos.address() + (long) j * m * memDim * 2;
            List<MemoryReadout.Spatial> spatial = readout.spatial(cond, bank::hasFeatures, w.frame());
            for (int i = 0; i < spatial.size(); i++) {
                MemoryReadout.Spatial sp = spatial.get(i);
                gathers += span(gather, bank.feature(sp.frame()), memBase + i * featureBytes, featureBytes);
                gathers += span(gather, spatialPos.address() + sp.slot() * featureBytes, posBase + i * featureBytes,
                        featureBytes);
            }
            List<MemoryReadout.Pointer> ptrs = readout.pointers(cond, bank::hasPointer, w.frame());
            long ptrRows = (long) memories * t * memDim * 2;
            for (int i = 0; i < ptrs.size(); i++) {
                MemoryReadout.Pointer p = ptrs.get(i);
                long at = ptrRows + i * pointerBytes;
                gathers += span(gather, bank.pointer(p.frame()), memBase + at, pointerBytes);
                int row = (j * pointers + i) * split;
                float[] enc = pointerPosition(p.distance());
                for (int k = 0; k < split; k++) {
                    for (float v : enc) {
                        ptrPos.putShort(Bf16.fromFloat(v));
                    }
                }
                gathers += span(gather, pointerPos.address() + (long) row * memDim * 2, posBase + at, pointerBytes);
            }
            frames.putInt(w.frameIndex());
            span(store, memoryEncoder.output().address() + j * featureBytes, bank.feature(w.frame()), featureBytes);
            span(store, maskDecoder.pointers().address() + j * pointerBytes, bank.pointer(w.frame()), pointerBytes);
        }
        inputs.upload(base, gather.position(), store.position(), ptrPos.position(), frames.position());
        maskDecoder.stageNoPrompts(n);
        int spans = gathers;
        graphs.run(stream, List.of("tracked", n, memories, pointers, side), () -> {
            ops.copySpans(stream, gatherTable, spans);
            memoryAttention.forward(n, curr, memory, memoryPos, m, pointerTokens);
            maskDecoder.forward(n, 2, true, memoryAttention.output(), encoder.s0(side), encoder.s1(side), frameOfSet);
            memoryEncoder.forward(n, curr, maskDecoder.lowRes(), new boolean[n], maskDecoder.objectScores());
            ops.copySpans(stream, storeTable, 2 * n);
        });
        queueResults(slot, chunk, false, results);
        for (Work w : chunk) {
            DeviceBank bank = w.bank();
            bank.featureFrame[w.frame() % ring] = w.frame();
            bank.pointerFrame[w.frame() % (POINTERS - 1)] = w.frame();
        }
    }

    /** Features + no_mem_embed → decoder with the prompts → memory encoder (binarized mask) → a new bank. */
    private void promptPass(List<Work> chunk, int side, Map<Work, ObjectResult> results) {
        int n = chunk.size();
        if (freeBanks.size() < n) {
            throw new IllegalStateException("tracking " + (limits.maxBanks() - freeBanks.size()) + " objects, "
                    + n + " more would pass the tracker's limit of " + limits.maxBanks());
        }
        int points = chunk.get(0).prompt().allPoints().length;
        boolean multimask = Sam2Model.multimask(points);
        float[][][] coords = new float[n][][];
        int[][] labels = new int[n][];
        List<DeviceBank> made = new ArrayList<>();
        int slot = inFlight.acquire();
        long base = inFlight.inputsAt(slot);
        ByteBuffer in = io.buffer();
        ByteBuffer gather = slice(in, base);
        ByteBuffer store = slice(in, base + inputs.storeOffset());
        ByteBuffer frames = slice(in, base + inputs.frameOffset());
        for (int j = 0; j < n; j++) {
            Work w = chunk.get(j);
            coords[j] = w.prompt().allPoints();
            labels[j] = w.prompt().allLabels();
            DeviceBank bank = new DeviceBank(freeBanks.pop(), w.frame(), bankLayout);
            made.add(bank);
            span(gather, encoder.top(side, w.frameIndex()), curr.address() + (long) j * t * c * 2, (long) t * c * 2);
            frames.putInt(w.frameIndex());
            span(store, memoryEncoder.output().address() + j * featureBytes, bank.feature(w.frame()), featureBytes);
            span(store, maskDecoder.pointers().address() + j * pointerBytes, bank.pointer(w.frame()), pointerBytes);
        }
        inputs.upload(base, gather.position(), store.position(), 0, frames.position());
        maskDecoder.stagePrompts(coords, labels);
        boolean[] fromPrompt = new boolean[n];
        Arrays.fill(fromPrompt, true);
        graphs.run(stream, List.of("prompted", n, points, side), () -> {
            ops.copySpans(stream, gatherTable, n);
            stream.copy(curr, image, (long) n * t * c * 2);
            encoderOps.addPeriodic(stream, image, noMemEmbed, (long) n * t * c, c);
            maskDecoder.forward(n, points + 1, multimask, image, encoder.s0(side), encoder.s1(side), frameOfSet);
            memoryEncoder.forward(n, curr, maskDecoder.lowRes(), fromPrompt, maskDecoder.objectScores());
            ops.copySpans(stream, storeTable, 2 * n);
        });
        queueResults(slot, chunk, true, results);
        for (int j = 0; j < n; j++) {
            Work w = chunk.get(j);
            w.stream().banksById.put(w.objectId(), made.get(j));
        }
    }

    /**
     * Queues the download of the decoder's outputs of a pass's objects into its slot; they are read into
     * {@code results} when the slot comes round or the step ends.
     */
    private void queueResults(int slot, List<Work> chunk, boolean conditioning, Map<Work, ObjectResult> results) {
        int n = chunk.size();
        outputs.download(stream, inFlight.resultsAt(slot), n);
        inFlight.queued(slot, stream, (pinned, at) -> {
            for (int j = 0; j < n; j++) {
                results.put(chunk.get(j), outputs.read(at, n, j, chunk.get(j).objectId(), conditioning));
            }
        });
    }

    private float[] pointerPosition(int distance) {
        if (distance < POINTERS) {
            if (pointerPosCache[distance] == null) {
                pointerPosCache[distance] = readout.pointerPosition(cpu, distance);
            }
            return pointerPosCache[distance];
        }
        return readout.pointerPosition(cpu, distance);
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the SAM 2 tracker is closed");
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
            maskDecoder.close();
            inFlight.close();
            encoder.close();
            pool.close();
            io.close();
            stream.close();
            cpu.close();
            kernels.close();
        } finally {
            context.close();
        }
    }
}
