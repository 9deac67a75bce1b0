package io.samstream.gpu.cuda.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.GpuWorkspace;
import io.samstream.gpu.cuda.StagedCopy;
import io.samstream.gpu.sam3.Prompt;
import io.samstream.gpu.sam3.Sam3Backend;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3Decoder;
import io.samstream.gpu.sam3.Sam3Fusion;
import io.samstream.gpu.sam3.Sam3MaskHead;
import io.samstream.gpu.sam3.Sam3Neck;
import io.samstream.gpu.sam3.Sam3Trunk;
import io.samstream.gpu.sam3.VisionFeatures;

/**
 * SAM 3's GPU parts on a GPU of their own, sharing one context: opens the context, stream, staging and one pool sized
 * for the ViT trunk ({@link CudaSam3Vit}), its necks ({@link CudaSam3Neck}: the detector's and, in a video model's
 * checkpoint, the tracker's), the fusion encoder ({@link CudaSam3FusionEncoder}), the DETR decoder ({@link
 * CudaSam3Decoder}) and the mask head ({@link CudaSam3MaskHead}, which borrows the necks' im2col rows), their weights
 * and one image's activations, and runs them behind the CPU model's {@link Sam3Backend} seam ({@link #factory}). Closing it frees the
 * GPU. The parts share the stream and the staging buffer, so their passes are serialized on this object.
 *
 * <p>The trunk's map stays on the device for the necks: a neck given the very array the last trunk pass returned
 * reads the trunk's output buffer instead of uploading it again (the seam's arrays are never written by their
 * readers); any other array is uploaded first.
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

    private final GpuWorkspace gpu;
    private final CudaSam3Vit vit;
    private final CudaSam3FusionEncoder encoder;
    /** A trunk map the necks are given that the trunk did not just compute goes up here. */
    private final DeviceBuffer trunkIn;
    private final long trunkValues;
    private final Sam3Trunk trunk = new Trunk();
    private final Sam3Neck neck;
    /** Null when the checkpoint has no tracker neck. */
    private final Sam3Neck trackerNeck;
    private final Sam3Fusion fusion = new Fusion();
    private final Sam3Decoder decoder;
    private final Sam3MaskHead maskHead;
    /** The array the last trunk pass returned, whose values are still in the trunk's output buffer. */
    private float[] lastTrunk;
    private boolean closed;

    /** The factory a {@code Sam3Model} takes: its image parts on GPU {@code ordinal}. */
    public static Sam3Backend.Factory factory(int ordinal) {
        return (sd, config, cpuPool) -> open(sd, config, ordinal);
    }

    /**
     * Opens GPU {@code ordinal} and uploads every image part (the tracker's neck when the detector weights have it).
     * Shapes the kernels cannot run fail before any GPU work.
     */
    public static CudaSam3 open(StateDict sd, Sam3Config config, int ordinal) {
        CudaSam3Vit.checkSupported(config.vision(), 1);
        CudaSam3FusionEncoder.checkSupported(config.detector(), tokens(config), maxPromptTokens(config));
        CudaSam3Neck.checkSupported(config);
        CudaSam3Decoder.checkSupported(config.detector(), config.vision().grid(), maxPromptTokens(config));
        CudaSam3MaskHead.checkSupported(config, maxPromptTokens(config), config.detector().queries());
        boolean trackerNeck = sd.hasPrefix(Sam3Neck.TRACKER);
        GpuWorkspace gpu = GpuWorkspace.open(ordinal, STAGING_BYTES, poolBytes(config, trackerNeck), "SAM 3");
        try {
            return new CudaSam3(sd, config, trackerNeck, gpu);
        } catch (RuntimeException e) {
            gpu.close();
            throw e;
        }
    }

    private CudaSam3(StateDict sd, Sam3Config config, boolean withTrackerNeck, GpuWorkspace gpu) {
        this.gpu = gpu;
        this.vit = new CudaSam3Vit(sd, config.vision(), 1, gpu.kernels(), gpu.stream(), gpu.pool(), gpu.staging());
        this.encoder = new CudaSam3FusionEncoder(sd, config.detector(), tokens(config), maxPromptTokens(config),
                gpu.kernels(), gpu.stream(), gpu.pool(), gpu.staging());
        this.trunkValues = (long) tokens(config) * config.vision().embedDim();
        DeviceWeights weights = new DeviceWeights(gpu.pool(), gpu.stream(), gpu.staging());
        CudaSam3Neck.Workspace necks = CudaSam3Neck.Workspace.allocate(gpu.pool(), config);
        this.neck = new Neck(new CudaSam3Neck(sd, Sam3Neck.DETECTOR, config, gpu.kernels(), gpu.stream(), weights,
                necks));
        this.trackerNeck = withTrackerNeck ? new Neck(new CudaSam3Neck(sd, Sam3Neck.TRACKER, config,
                gpu.kernels(), gpu.stream(), weights, necks)) : null;
        this.decoder = new Decoder(new CudaSam3Decoder(sd, config.detector(), config.vision().grid(),
                maxPromptTokens(config), gpu.kernels(), gpu.stream(), gpu.pool(), gpu.staging()));
        this.maskHead = new MaskHead(new CudaSam3MaskHead(sd, config, maxPromptTokens(config),
                config.detector().queries(), gpu.kernels(), gpu.stream(), gpu.pool(), gpu.staging(), necks.rows()));
        this.trunkIn = gpu.pool().allocateBf16(trunkValues, "sam3 neck input (a given trunk map)");
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
        return Sam3Backend.describe(device(), neck.describe(), device(), decoder.describe(), maskHead.describe());
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
        gpu.close();
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the CUDA SAM 3 backend is closed");
        }
    }

    /** The trunk as the model sees it: one pass at a time on the shared stream; closing is the owner's. */
    private final class Trunk implements Sam3Trunk {
        @Override
        public float[] forward(float[] chw) {
            synchronized (CudaSam3.this) {
                requireOpen();
                lastTrunk = null;
                lastTrunk = vit.forward(chw);
                return lastTrunk;
            }
        }

        @Override
        public String describe() {
            return device();
        }

        @Override
        public void close() {}
    }

    /**
     * A neck as the model sees it: the trunk's map on the device (the trunk's output, or {@code trunkIn} after an
     * upload), one pass, the three levels brought back as fp32; one pass at a time on the shared stream; closing is
     * the owner's.
     */
    private final class Neck implements Sam3Neck {
        private final CudaSam3Neck part;

        Neck(CudaSam3Neck part) {
            this.part = part;
        }

        @Override
        public float[][] forward(float[] trunkMap) {
            synchronized (CudaSam3.this) {
                requireOpen();
                if (trunkMap.length != trunkValues) {
                    throw new IllegalArgumentException("neck: a trunk map of " + trunkMap.length + " values; "
                            + trunkValues + " expected");
                }
                DeviceBuffer input = vit.output();
                if (trunkMap != lastTrunk) {
                    StagedCopy.uploadBf16(gpu.stream(), gpu.staging(), trunkMap, trunkIn);
                    input = trunkIn;
                }
                part.forward(input);
                DeviceBuffer[] levels = part.workspace().levels();
                float[][] out = new float[levels.length][];
                for (int i = 0; i < levels.length; i++) {
                    out[i] = StagedCopy.downloadBf16(gpu.stream(), gpu.staging(), levels[i], part.levelValues(i));
                }
                return out;
            }
        }

        @Override
        public String describe() {
            return device();
        }

        @Override
        public void close() {}
    }

    /** The fusion encoder as the model sees it: one pass at a time on the shared stream; closing is the owner's. */
    private final class Fusion implements Sam3Fusion {
        @Override
        public float[] forward(float[] image, float[] pos, int tokens, Prompt prompt) {
            synchronized (CudaSam3.this) {
                requireOpen();
                return encoder.forward(image, pos, tokens, prompt);
            }
        }

        @Override
        public String describe() {
            return device();
        }

        @Override
        public void close() {}
    }

    /** The decoder as the model sees it: one pass at a time on the shared stream; closing is the owner's. */
    private final class Decoder implements Sam3Decoder {
        private final CudaSam3Decoder part;

        Decoder(CudaSam3Decoder part) {
            this.part = part;
        }

        @Override
        public Output forward(float[] memory, float[] memoryPos, int grid, Prompt prompt) {
            synchronized (CudaSam3.this) {
                requireOpen();
                return part.forward(memory, memoryPos, grid, prompt);
            }
        }

        @Override
        public String describe() {
            return device();
        }

        @Override
        public void close() {}
    }

    /** The mask head as the model sees it: one pass at a time on the shared stream; closing is the owner's. */
    private final class MaskHead implements Sam3MaskHead {
        private final CudaSam3MaskHead head;

        MaskHead(CudaSam3MaskHead head) {
            this.head = head;
        }

        @Override
        public float[] masks(float[] memory, VisionFeatures image, Prompt prompt, float[] embeddings, int n) {
            synchronized (CudaSam3.this) {
                requireOpen();
                return head.masks(memory, image, prompt, embeddings, n);
            }
        }

        @Override
        public String describe() {
            return device();
        }

        @Override
        public void close() {}
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
     * The pool: the trunk's ({@link #trunkBytes}), the fusion encoder's, the necks' (one or two necks' weights, their
     * shared workspace and the input of a given map), the decoder's, the mask head's (its rows are the necks') and
     * {@link #SPARE_BYTES}.
     */
    static long poolBytes(Sam3Config config, boolean trackerNeck) {
        return trunkBytes(config.vision())
                + CudaSam3FusionEncoder.poolBytes(config.detector(), tokens(config), maxPromptTokens(config))
                + (trackerNeck ? 2 : 1) * CudaSam3Neck.weightBytes(config) + CudaSam3Neck.workspaceBytes(config)
                + align((long) tokens(config) * config.vision().embedDim() * 2)
                + CudaSam3Decoder.poolBytes(config.detector(), config.vision().grid(), maxPromptTokens(config))
                + CudaSam3MaskHead.poolBytes(config, maxPromptTokens(config), config.detector().queries())
                + SPARE_BYTES;
    }

    /**
     * The trunk's share: its weights in bf16 (upper bound: every trunk tensor, each 256-byte aligned, padding of the
     * MLP and the patch rows included) plus one image's activations.
     */
    static long trunkBytes(Sam3Config.Vision v) {
        long e = v.embedDim(), grid = v.grid(), mlp = CudaSam3Vit.roundUp8(v.mlpHidden());
        long patchCols = CudaSam3Vit.roundUp8(3 * v.patchSize() * v.patchSize());
        long perBlock = 4 * align(e * 2) + align(3 * e * e * 2) + align(3 * e * 2) + align(e * e * 2) + align(e * 2)
                + align(mlp * e * 2) + align(mlp * 2) + align(e * mlp * 2) + align(e * 2);
        long weights = v.depth() * perBlock + align(e * patchCols * 2) + align(grid * grid * e * 2) + 2 * align(e * 2)
                + 4 * align(grid * grid * v.headDim() / 2 * 4);
        int per = (v.grid() + v.windowSize() - 1) / v.windowSize();
        long padded = Math.max(grid * grid, (long) per * per * v.windowSize() * v.windowSize());
        long activations = align(3L * v.imageSize() * v.imageSize() * 4) + 2 * align(grid * grid * e * 2)
                + 2 * align(padded * e * 2) + align(padded * 3 * e * 2)
                + align(grid * grid * Math.max(mlp, patchCols) * 2);
        return weights + activations;
    }

    private static long align(long bytes) {
        return BumpAllocator.alignUp(Math.max(bytes, 1));
    }
}
