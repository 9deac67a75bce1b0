package io.samstream.gpu.cuda.sam3;

import io.samstream.config.ModelPrecision;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.CudaEvent;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.GpuWorkspace;
import io.samstream.gpu.cuda.LaunchTimer;
import io.samstream.gpu.cuda.StagedCopy;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Prompt;
import io.samstream.gpu.sam3.Sam3Backend;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3Decoder;
import io.samstream.gpu.sam3.Sam3Fusion;
import io.samstream.gpu.sam3.Sam3MaskHead;
import io.samstream.gpu.sam3.Sam3Neck;
import io.samstream.gpu.sam3.Sam3Trunk;
import io.samstream.gpu.sam3.VisionFeatures;
import java.util.function.Consumer;

/**
 * SAM 3's GPU parts on a GPU of their own, sharing one context: opens the context, stream, staging and one pool sized
 * for the ViT trunk ({@link CudaSam3Vit}), its necks ({@link CudaSam3Neck}: the detector's and, in a video model's
 * checkpoint, the tracker's), the fusion encoder ({@link CudaSam3FusionEncoder}), the DETR decoder ({@link
 * CudaSam3Decoder}) and the mask head ({@link CudaSam3MaskHead}, which borrows the necks' im2col rows), their weights
 * and one image's activations, and runs them behind the CPU model's {@link Sam3Backend} seam ({@link #factory}). Closing it frees the
 * GPU. The parts share the stream and the staging buffer, so their passes are serialized on this object.
 *
 * <p>An image's features stay on the device between the parts: the trunk's map, the detector neck's levels and the
 * fusion memory go into rings of device slots ({@link FeatureRing}, {@value #FRAMES} images' worth, more fusion
 * memories as an image has one per phrase) and are handed on as {@link FeatureMap}s that the next part reads in
 * place; the CPU gets their values only when it asks (the geometry encoder reads the 1x level, a test the trunk). A
 * map of another backend, or one spilled from its slot, is uploaded. The constant position encoding goes up once.
 * The tracker neck's levels have slots of their own, which the tracker's passes on the same GPU read in place
 * ({@link #readTrackerLevels}: {@code CudaSam3Tracker} makes its features there). An 8-bit frame
 * goes up as bytes and is resized and normalized on the device ({@link Sam3GpuPreprocessor}).
 */
public final class CudaSam3 implements Sam3Backend {
    private static final long STAGING_BYTES = 32L << 20;
    /** Pool bytes beyond what the parts take. */
    static final long SPARE_BYTES = 64L << 20;
    /**
     * Exemplar boxes one prompt may have on the GPU: the prompt buffers hold the phrase's tokens, this many boxes and
     * the geometry encoder's class token (a video concept has at most 16).
     */
    public static final int MAX_EXEMPLAR_BOXES = 64;
    /** Images whose trunk map and neck levels stay on the device at once: streams stepping side by side. */
    static final int FRAMES = 4;
    /** Fusion memories that stay on the device at once (one per image and phrase). */
    static final int MEMORIES = 2 * FRAMES;

    private final GpuWorkspace gpu;
    private final CudaSam3Vit vit;
    /** An 8-bit image to the trunk's input, on the device. */
    private final Sam3GpuPreprocessor preprocessor;
    private final CudaSam3FusionEncoder encoder;
    /** A trunk map the necks are given that is not on the device goes up here. */
    private final DeviceBuffer trunkIn;
    private final long trunkValues;
    private final Sam3Trunk trunk = new Trunk();
    private final Sam3Neck neck;
    /** Null when the checkpoint has no tracker neck. */
    private final Sam3Neck trackerNeck;
    private final Sam3Fusion fusion = new Fusion();
    private final CudaSam3Decoder decoderPart;
    private final Sam3Decoder decoder = new Decoder();
    private final CudaSam3MaskHead head;
    private final Sam3MaskHead maskHead = new MaskHead();
    /** The trunk's maps, the detector neck's levels (4x, 2x, 1x) and the fusion memories, each in its slots. */
    private final Slots trunks, memories;
    private final Slots[] levels = new Slots[3];
    /** The tracker neck's levels (4x, 2x, 1x), when there is one. */
    private final Slots[] trackerLevels = new Slots[3];
    /** {@link #readTrackerLevels}: the neck's pass done; the reader's reads done. */
    private final CudaEvent levelsWritten, levelsRead;
    private boolean closed;

    /** The factory a {@code Sam3Model} takes: its image parts on GPU {@code ordinal}, the trunk in bf16. */
    public static Sam3Backend.Factory factory(int ordinal) {
        return factory(ordinal, ModelPrecision.BF16);
    }

    /** As above, the trunk's block Linears in {@code precision} ({@code samstream.model.precision}). */
    public static Sam3Backend.Factory factory(int ordinal, ModelPrecision precision) {
        return (sd, config, cpuPool) -> open(sd, config, ordinal, precision);
    }

    /**
     * Opens GPU {@code ordinal} and uploads every image part (the tracker's neck when the detector weights have it),
     * the trunk's block Linears in {@code precision} ({@link CudaSam3Vit}). Shapes the kernels cannot run fail before
     * any GPU work.
     */
    public static CudaSam3 open(StateDict sd, Sam3Config config, int ordinal, ModelPrecision precision) {
        CudaSam3Vit.checkSupported(config.vision(), 1);
        CudaSam3Vit.checkPrecision(config.vision(), precision);
        CudaSam3FusionEncoder.checkSupported(config.detector(), tokens(config), maxPromptTokens(config));
        CudaSam3Neck.checkSupported(config);
        CudaSam3Decoder.checkSupported(config.detector(), config.vision().grid(), maxPromptTokens(config));
        CudaSam3MaskHead.checkSupported(config, maxPromptTokens(config), config.detector().queries());
        boolean trackerNeck = sd.hasPrefix(Sam3Neck.TRACKER);
        GpuWorkspace gpu = GpuWorkspace.open(ordinal, STAGING_BYTES, poolBytes(config, trackerNeck, precision),
                "SAM 3");
        try {
            return new CudaSam3(sd, config, trackerNeck, precision, gpu);
        } catch (RuntimeException e) {
            gpu.close();
            throw e;
        }
    }

    private CudaSam3(StateDict sd, Sam3Config config, boolean withTrackerNeck, ModelPrecision precision,
                     GpuWorkspace gpu) {
        this.gpu = gpu;
        this.vit = new CudaSam3Vit(sd, config.vision(), 1, precision, gpu.kernels(), gpu.stream(), gpu.pool(),
                gpu.staging());
        // one pinned slot: a pass waits for its trunk anyway
        this.preprocessor = new Sam3GpuPreprocessor(gpu.kernels(), gpu.stream(), gpu.pool(),
                config.vision().imageSize(), Sam3GpuPreprocessor.DEFAULT_MAX_SIDE,
                Sam3GpuPreprocessor.DEFAULT_MAX_PIXELS, 1);
        this.encoder = new CudaSam3FusionEncoder(sd, config.detector(), tokens(config), maxPromptTokens(config),
                gpu.kernels(), gpu.stream(), gpu.pool(), gpu.staging());
        this.trunkValues = (long) tokens(config) * config.vision().embedDim();
        DeviceWeights weights = new DeviceWeights(gpu.pool(), gpu.stream(), gpu.staging());
        CudaSam3Neck.Workspace necks = CudaSam3Neck.Workspace.allocate(gpu.pool(), config);
        CudaSam3Neck detectorNeck = new CudaSam3Neck(sd, Sam3Neck.DETECTOR, config, gpu.kernels(), gpu.stream(),
                weights, necks);
        this.neck = new Neck(detectorNeck, levels);
        this.trackerNeck = withTrackerNeck ? new Neck(new CudaSam3Neck(sd, Sam3Neck.TRACKER, config,
                gpu.kernels(), gpu.stream(), weights, necks), trackerLevels) : null;
        this.decoderPart = new CudaSam3Decoder(sd, config.detector(), config.vision().grid(),
                maxPromptTokens(config), gpu.kernels(), gpu.stream(), gpu.pool(), gpu.staging());
        this.head = new CudaSam3MaskHead(sd, config, maxPromptTokens(config), config.detector().queries(),
                gpu.kernels(), gpu.stream(), gpu.pool(), gpu.staging(), necks.rows());
        this.trunkIn = gpu.pool().allocateBf16(trunkValues, "sam3 neck input (a given trunk map)");
        this.trunks = new Slots("sam3 trunk map", FRAMES, trunkValues);
        for (int i = 0; i < 3; i++) {
            levels[i] = new Slots("sam3 neck level " + (4 >> i) + "x", FRAMES, detectorNeck.levelValues(i));
            if (withTrackerNeck) {
                trackerLevels[i] = new Slots("sam3 tracker neck level " + (4 >> i) + "x", FRAMES,
                        detectorNeck.levelValues(i));
            }
        }
        this.levelsWritten = new CudaEvent(gpu.context(), false);
        this.levelsRead = new CudaEvent(gpu.context(), false);
        this.memories = new Slots("sam3 fusion memory", MEMORIES,
                (long) tokens(config) * config.detector().dModel());
    }

    /** One kind of feature map in its ring of device slots. */
    private final class Slots {
        final FeatureRing ring;
        final DeviceBuffer[] buffers;
        final long values;

        Slots(String name, int count, long values) {
            this.values = values;
            this.buffers = new DeviceBuffer[count];
            for (int i = 0; i < count; i++) {
                buffers[i] = gpu.pool().allocateBf16(values, name + " (slot " + i + ")");
            }
            this.ring = new FeatureRing(name, count, values, CudaSam3.this,
                    i -> StagedCopy.downloadBf16(gpu.stream(), gpu.staging(), buffers[i], values));
        }

        /** A new map whose slot the caller fills, and that slot's buffer. */
        FeatureRing.Resident acquire() {
            return ring.acquire();
        }

        /** The device buffer holding {@code map}'s values, or null when they are not in one of these slots. */
        DeviceBuffer find(FeatureMap map) {
            return map instanceof FeatureRing.Resident r && r.of(ring) && r.resident() ? buffers[r.slot()] : null;
        }

        /** {@code map}'s values on the device: its slot, or {@code staging} after an upload. */
        DeviceBuffer onDevice(FeatureMap map, DeviceBuffer staging) {
            DeviceBuffer found = find(map);
            if (found != null) {
                return found;
            }
            StagedCopy.uploadBf16(gpu.stream(), gpu.staging(), map.values(), staging);
            return staging;
        }
    }

    /**
     * Times every kernel these parts launch from now on ({@code null}: stops); benchmarks only: the parts use no CUDA
     * graphs, so each launch is timed by its own pair of events.
     */
    public synchronized void timeLaunches(LaunchTimer timer) {
        requireOpen();
        gpu.kernels().timeLaunches(timer);
    }

    /** Maps spilled from full rings so far (trunk, levels, memories): a sign that {@link #FRAMES} is too small. */
    synchronized long spills() {
        long n = trunks.ring.spills() + memories.ring.spills();
        for (Slots l : levels) {
            n += l.ring.spills();
        }
        for (Slots l : trackerLevels) {
            n += l == null ? 0 : l.ring.spills();
        }
        return n;
    }

    @Override
    public Sam3Trunk trunk() {
        return trunk;
    }

    @Override
    public Sam3Neck neck() {
        return neck;
    }

    @Override
    public Sam3Neck trackerNeck() {
        return trackerNeck;
    }

    @Override
    public Sam3Fusion fusion() {
        return fusion;
    }

    @Override
    public Sam3Decoder decoder() {
        return decoder;
    }

    @Override
    public Sam3MaskHead maskHead() {
        return maskHead;
    }

    /** E.g. "ViT trunk, necks, fusion encoder, decoder and mask head on GPU name (bf16)" for logs and masks.json. */
    @Override
    public String describe() {
        return Sam3Backend.describe(device(), device(), device(), device(), device());
    }

    private String device() {
        return gpu.context().info().describe() + " (bf16)";
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            preprocessor.close(); // its pinned slots need the context
            levelsWritten.close();
            levelsRead.close();
        } finally {
            gpu.close();
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the CUDA SAM 3 backend is closed");
        }
    }

    /** A part as the model sees it: its passes on the shared stream, one at a time; closing is the owner's. */
    private abstract class Part implements AutoCloseable {
        public String describe() {
            return device();
        }

        @Override
        public void close() {}
    }

    /** The trunk: one pass, its map copied into a trunk slot; an 8-bit image is pre-processed on the device. */
    private final class Trunk extends Part implements Sam3Trunk {
        @Override
        public FeatureMap forward(float[] chw) {
            synchronized (CudaSam3.this) {
                requireOpen();
                vit.queue(chw);
                return keep();
            }
        }

        @Override
        public FeatureMap forward(RgbImage image, int size) {
            synchronized (CudaSam3.this) {
                requireOpen();
                if (size != preprocessor.size()) {
                    throw new IllegalArgumentException("model input side " + size + "; this trunk's is "
                            + preprocessor.size());
                }
                preprocessor.enqueue(image, vit.input());
                vit.forward(1);
                return keep();
            }
        }

        /** The trunk's output into a trunk slot. */
        private FeatureMap keep() {
            FeatureRing.Resident map = trunks.acquire();
            gpu.stream().copy(vit.output(), trunks.buffers[map.slot()], trunkValues * 2);
            return map;
        }
    }

    /**
     * A neck: its levels into its own level slots, read in place by the next parts (the detector's: the fusion
     * encoder and the mask head; the tracker's: the tracker's passes on this GPU, {@link #readTrackerLevels}), by
     * any other reader through their values.
     */
    private final class Neck extends Part implements Sam3Neck {
        private final CudaSam3Neck part;
        /** The slots of its levels (4x, 2x, 1x), filled when the constructor is done. */
        private final Slots[] rings;

        Neck(CudaSam3Neck part, Slots[] rings) {
            this.part = part;
            this.rings = rings;
        }

        @Override
        public FeatureMap[] forward(FeatureMap trunkMap) {
            synchronized (CudaSam3.this) {
                DeviceBuffer input = trunkInput(trunkMap);
                FeatureRing.Resident[] out = new FeatureRing.Resident[3];
                DeviceBuffer[] buffers = new DeviceBuffer[3];
                for (int i = 0; i < 3; i++) {
                    out[i] = rings[i].acquire();
                    buffers[i] = rings[i].buffers[out[i].slot()];
                }
                part.forward(input, buffers);
                return out;
            }
        }
    }

    /**
     * Queues {@code read} of the tracker neck's {@code levels} (4x, 2x, 1x; bf16, channels-last) on {@code reader}, a
     * stream of this GPU's context: {@code reader} first waits for the neck's pass, and this backend's later passes
     * wait for what {@code read} queued, so a slot is not rewritten under it. False, with nothing queued, when a level
     * is not one of this backend's tracker levels still in its slot (then read its values).
     */
    boolean readTrackerLevels(FeatureMap[] levels, CudaStream reader, Consumer<DeviceBuffer[]> read) {
        synchronized (this) {
            if (closed || trackerNeck == null || levels.length != 3
                    || !reader.context().sameContext(gpu.context())) {
                return false;
            }
            DeviceBuffer[] buffers = new DeviceBuffer[3];
            for (int i = 0; i < 3; i++) {
                buffers[i] = trackerLevels[i].find(levels[i]);
                if (buffers[i] == null) {
                    return false;
                }
            }
            gpu.stream().record(levelsWritten);
            reader.waitFor(levelsWritten);
            read.accept(buffers);
            reader.record(levelsRead);
            gpu.stream().waitFor(levelsRead);
            return true;
        }
    }

    /** A trunk map on the device: its slot, or {@code trunkIn} after an upload. The caller holds the lock. */
    private DeviceBuffer trunkInput(FeatureMap trunkMap) {
        requireOpen();
        if (trunkMap.length() != trunkValues) {
            throw new IllegalArgumentException("neck: a trunk map of " + trunkMap.length() + " values; "
                    + trunkValues + " expected");
        }
        return trunks.onDevice(trunkMap, trunkIn);
    }

    /** The fusion encoder: the 1x level read in place, the memory copied into a memory slot. */
    private final class Fusion extends Part implements Sam3Fusion {
        @Override
        public FeatureMap forward(FeatureMap image, float[] pos, int tokens, Prompt prompt) {
            synchronized (CudaSam3.this) {
                requireOpen();
                int m = encoder.stage(image, pos, tokens, prompt);
                encoder.forward(levels[2].onDevice(image, encoder.input()), m);
                FeatureRing.Resident memory = memories.acquire();
                gpu.stream().copy(encoder.output(), memories.buffers[memory.slot()], memories.values * 2);
                return memory;
            }
        }
    }

    /** The decoder: the fusion memory read in place. */
    private final class Decoder extends Part implements Sam3Decoder {
        @Override
        public Output forward(FeatureMap memory, float[] memoryPos, int grid, Prompt prompt) {
            synchronized (CudaSam3.this) {
                requireOpen();
                int m = decoderPart.stage(memory, memoryPos, grid, prompt);
                decoderPart.forward(memories.onDevice(memory, decoderPart.memoryInput()), m);
                return decoderPart.output();
            }
        }
    }

    /** The mask head: the fusion memory read in place, the 2x and 4x levels copied on the device. */
    private final class MaskHead extends Part implements Sam3MaskHead {
        @Override
        public float[] masks(FeatureMap memory, VisionFeatures image, Prompt prompt, float[] embeddings, int n) {
            synchronized (CudaSam3.this) {
                requireOpen();
                int m = head.stage(memory, image, prompt, embeddings, n);
                for (int i = 0; i < 2; i++) {
                    DeviceBuffer into = head.levelInput(i), level = levels[i].find(image.level(i));
                    if (level != null) {
                        gpu.stream().copy(level, into, levels[i].values * 2);
                    } else {
                        StagedCopy.uploadBf16(gpu.stream(), gpu.staging(), image.level(i).values(), into);
                    }
                }
                head.forward(memories.onDevice(memory, head.memoryInput()), m, CudaSam3Vit.roundUp8(n));
                return head.logits(n);
            }
        }
    }

    /** The image tokens the fusion encoder reads: the ViT's grid, squared. */
    static int tokens(Sam3Config config) {
        return config.vision().grid() * config.vision().grid();
    }

    /** The most valid prompt tokens: the text context, {@link #MAX_EXEMPLAR_BOXES} and the geometry's class token. */
    static int maxPromptTokens(Sam3Config config) {
        return config.text().contextLength() + MAX_EXEMPLAR_BOXES + 1;
    }

    /**
     * The pool: the trunk's in {@code precision} ({@link CudaSam3Vit#poolBytes}), the fusion encoder's, the necks' (one or two necks' weights, their
     * shared workspace and the input of a given map), the decoder's, the mask head's (its rows are the necks'), the
     * feature slots ({@link #slotBytes}), the pre-processing's ({@link Sam3GpuPreprocessor#poolBytes}) and
     * {@link #SPARE_BYTES}.
     */
    static long poolBytes(Sam3Config config, boolean trackerNeck, ModelPrecision precision) {
        return CudaSam3Vit.poolBytes(config.vision(), precision)
                + CudaSam3FusionEncoder.poolBytes(config.detector(), tokens(config), maxPromptTokens(config))
                + (trackerNeck ? 2 : 1) * CudaSam3Neck.weightBytes(config) + CudaSam3Neck.workspaceBytes(config)
                + align((long) tokens(config) * config.vision().embedDim() * 2)
                + CudaSam3Decoder.poolBytes(config.detector(), config.vision().grid(), maxPromptTokens(config))
                + CudaSam3MaskHead.poolBytes(config, maxPromptTokens(config), config.detector().queries())
                + slotBytes(config, trackerNeck) + Sam3GpuPreprocessor.poolBytes(config.vision().imageSize())
                + SPARE_BYTES;
    }

    /**
     * {@link #FRAMES} trunk maps and neck levels (both necks' with a tracker neck), {@link #MEMORIES} fusion memories,
     * bf16.
     */
    static long slotBytes(Sam3Config config, boolean trackerNeck) {
        long t = tokens(config), d = config.detector().dModel();
        long levels = align(16 * t * d * 2) + align(4 * t * d * 2) + align(t * d * 2);
        long frame = align(t * config.vision().embedDim() * 2) + (trackerNeck ? 2 : 1) * levels;
        return FRAMES * frame + MEMORIES * align(t * d * 2);
    }

    private static long align(long bytes) {
        return BumpAllocator.alignUp(Math.max(bytes, 1));
    }
}
