package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.CheckpointException;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.Mlp;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * SAM 2.1 in fp32 on the CPU: the parts of {@code SAM2Base} a streaming tracker calls, each following Meta's
 * method of the same name (forward_image, _prepare_memory_conditioned_features, _forward_sam_heads,
 * _encode_new_memory). Weights are read once; GEMMs and attention run on the shared CPU thread pool.
 */
public final class Sam2Model implements Sam2Tracking {
    /** Stored memory features are bf16, as SAM2VideoPredictor stores them (maskmem_features.to(bfloat16)). */
    static final boolean BF16_MEMORY = true;
    /** The low-resolution mask of an object judged absent (NO_OBJ_SCORE). */
    public static final float NO_OBJECT_SCORE = -1024f;

    private static final float[] MEAN = {0.485f, 0.456f, 0.406f};
    private static final float[] STD = {0.229f, 0.224f, 0.225f};

    private final Sam2Config config;
    private final CpuThreadPool pool;
    private final Sam2ImageEncoder imageEncoder;
    private final Sam2PromptEncoder promptEncoder;
    private final Sam2MaskDecoder maskDecoder;
    private final MemoryAttention memoryAttention;
    private final MemoryEncoder memoryEncoder;
    private final Mlp objPtrProj;
    private final MemoryReadout readout;
    private final float[] noMemEmbed;
    private final float[] noObjPtr;
    private final float[] noObjEmbedSpatial;
    /** Where the image encoder, memory attention and memory encoder run instead (the GPU), or null. */
    private final Sam2Offload offload;

    /** What the SAM heads give for one object on one frame. */
    public record Heads(float[] lowRes, float objectScore, float[] pointer, float predictedIou) {}

    public Sam2Model(StateDict sd, Sam2Config config, int threads) {
        this(sd, config, threads, null);
    }

    /**
     * As above, with the image encoder, the memory attention and the memory encoder run by {@code offload} (closed
     * with this model; may be null); their CPU versions are then not built (the offload read and checked those
     * weights, and the host does not hold them twice).
     */
    public Sam2Model(StateDict sd, Sam2Config config, int threads, Sam2Offload offload) {
        this.config = config;
        this.offload = offload;
        this.pool = new CpuThreadPool(threads);
        try {
            int c = config.hidden();
            int m = config.memDim();
            this.imageEncoder = offload == null ? new Sam2ImageEncoder(sd, config) : null;
            this.promptEncoder = new Sam2PromptEncoder(sd, config);
            this.maskDecoder = new Sam2MaskDecoder(sd, config);
            this.memoryAttention = offload == null ? new MemoryAttention(sd, config) : null;
            this.memoryEncoder = offload == null ? new MemoryEncoder(sd, config) : null;
            this.objPtrProj = Mlp.load(sd, "obj_ptr_proj", c, c, c, 3);
            this.readout = new MemoryReadout(sd, config);
            this.noMemEmbed = sd.get("no_mem_embed", 1, 1, c).data().clone();
            this.noObjPtr = sd.get("no_obj_ptr", 1, c).data().clone();
            this.noObjEmbedSpatial = sd.get("no_obj_embed_spatial", 1, m).data().clone();
        } catch (RuntimeException e) {
            pool.close();
            if (offload != null) {
                offload.close();
            }
            throw e;
        }
    }

    /** Loads one of Meta's SAM 2.1 checkpoints ({@code sam2.1_hiera_*.pt}, or any state_dict of one). */
    public static Sam2Model load(Path checkpoint, int threads) {
        return load(checkpoint, null, threads);
    }

    /** Loads a checkpoint whose shapes are not a release's, with the layout they need. */
    public static Sam2Model load(Path checkpoint, Sam2Config.Layout layout, int threads) {
        StateDict sd = CheckpointLoader.load(checkpoint);
        Sam2Config config = Sam2ConfigInference.infer(sd, layout);
        try {
            return new Sam2Model(sd, config, threads);
        } catch (IllegalArgumentException e) {
            throw new CheckpointException(checkpoint, "does not fit " + config + ": " + e.getMessage(), e);
        }
    }

    @Override
    public Sam2Config config() {
        return config;
    }

    /** A stream tracked on this model ({@link Sam2VideoTracker}). */
    @Override
    public Sam2VideoTracker openStream() {
        return new Sam2VideoTracker(this);
    }

    /**
     * The model input of an RGB frame already at the model's size (S x S, interleaved bytes), normalized as
     * SAM2VideoPredictor's frame loader does: (u8 / 255 - mean) / std, planar [3, S, S].
     */
    public float[] normalize(byte[] rgb) {
        int s = config.imageSize();
        if (rgb.length != 3 * s * s) {
            throw new IllegalArgumentException("RGB frame of " + rgb.length + " bytes; the model takes " + s + " x "
                    + s + " (resize first)");
        }
        float[] out = new float[3 * s * s];
        for (int i = 0; i < s * s; i++) {
            for (int ch = 0; ch < 3; ch++) {
                float v = (float) ((rgb[3 * i + ch] & 0xFF) / 255.0);
                out[ch * s * s + i] = (v - MEAN[ch]) / STD[ch];
            }
        }
        return out;
    }

    /** What runs the heavy parts, for logs. */
    @Override
    public String describe() {
        return offload != null ? offload.describe() : "CPU (fp32, " + pool.threads() + " threads)";
    }

    /** forward_image: the frame's features. */
    public FrameFeatures encodeImage(float[] planarImage) {
        return offload != null ? offload.encodeImage(planarImage) : imageEncoder.forward(pool, planarImage);
    }

    /** The image features of a first (initial conditioning) frame: top + no_mem_embed. */
    float[] withoutMemory(FrameFeatures f) {
        float[] out = f.top().clone();
        int c = config.hidden();
        for (int i = 0; i < out.length; i++) {
            out[i] += noMemEmbed[i % c];
        }
        return out;
    }

    /**
     * _prepare_memory_conditioned_features for a tracked frame: the memories and object pointers {@link MemoryReadout}
     * chooses from the bank, with their encodings, attended by the frame's features.
     */
    float[] conditioned(FrameFeatures f, MemoryBank bank, int frame) {
        int n = f.side() * f.side();
        int m = config.memDim();
        List<Integer> condFrames = new ArrayList<>();
        for (MemoryBank.Entry e : bank.conditioningFrames()) {
            condFrames.add(e.frame());
        }
        List<MemoryReadout.Spatial> spatial = readout.spatial(condFrames,
                t -> bank.tracked(t) != null && bank.tracked(t).features() != null, frame);
        List<MemoryReadout.Pointer> pointers = readout.pointers(condFrames, t -> bank.tracked(t) != null, frame);
        int split = readout.pointerTokens();
        int spatialTokens = spatial.size() * n;
        int pointerTokens = pointers.size() * split;
        int total = spatialTokens + pointerTokens;
        float[] memory = new float[total * m];
        float[] pos = new float[total * m];
        for (int i = 0; i < spatial.size(); i++) {
            MemoryReadout.Spatial s = spatial.get(i);
            System.arraycopy(entry(bank, s.frame()).features(), 0, memory, i * n * m, n * m);
            System.arraycopy(readout.spatialPosition(s.slot()), 0, pos, i * n * m, n * m);
        }
        for (int i = 0; i < pointers.size(); i++) {
            MemoryReadout.Pointer p = pointers.get(i);
            float[] ptr = entry(bank, p.frame()).pointer();
            float[] enc = readout.pointerPosition(pool, p.distance());
            for (int s = 0; s < split; s++) {
                int row = spatialTokens + i * split + s;
                System.arraycopy(ptr, s * m, memory, row * m, m);
                System.arraycopy(enc, 0, pos, row * m, m);
            }
        }
        return offload != null ? offload.attendMemory(f.top(), memory, pos, total, pointerTokens)
                : memoryAttention.forward(pool, f.top(), f.topPos(), n, memory, pos, total, pointerTokens);
    }

    /** The bank's entry of a frame, conditioning or tracked. */
    private static MemoryBank.Entry entry(MemoryBank bank, int frame) {
        for (MemoryBank.Entry e : bank.conditioningFrames()) {
            if (e.frame() == frame) {
                return e;
            }
        }
        return bank.tracked(frame);
    }

    /**
     * _forward_sam_heads: prompts (model-input pixels; labels 0/1 points, 2/3 box corners; none on tracked
     * frames) decoded against the (memory-conditioned) image embedding.
     */
    Heads heads(float[] image, FrameFeatures f, float[][] points, int[] labels, boolean multimask) {
        float[][] pts = points;
        int[] lbl = labels;
        if (pts.length == 0) { // no prompt: the reference passes one padding point
            pts = new float[][] {{0f, 0f}};
            lbl = new int[] {-1};
        }
        float[] sparse = promptEncoder.sparse(pts, lbl);
        Sam2MaskDecoder.Output out = maskDecoder.decode(pool, image, sparse, pts.length + 1,
                promptEncoder.densePe(), promptEncoder.noMaskEmbedding(), f, multimask);
        int best = multimask ? Sam2MaskDecoder.argmax(out.ious()) : 0;
        boolean appearing = out.objectScore() > 0;
        float[] lowRes = out.masks()[best].clone();
        if (!appearing) {
            java.util.Arrays.fill(lowRes, NO_OBJECT_SCORE);
        }
        float[] pointer;
        if (appearing) {
            pointer = objPtrProj.forward(pool, out.tokens()[best], 1);
        } else {
            pointer = noObjPtr.clone();
        }
        return new Heads(lowRes, out.objectScore(), pointer, out.ious()[best]);
    }

    /**
     * The mask decoder on a single image, as SAM2ImagePredictor calls it: prompts (model-input pixels; labels
     * 0/1 points, 2/3 box corners) against the features plus no_mem_embed, no memory, and no object-score
     * gating of the masks (the image predictor returns the decoder's masks as they are).
     */
    Sam2MaskDecoder.Output decodeImage(FrameFeatures f, float[][] points, int[] labels, boolean multimask) {
        float[] sparse = promptEncoder.sparse(points, labels);
        return maskDecoder.decode(pool, withoutMemory(f), sparse, points.length + 1, promptEncoder.densePe(),
                promptEncoder.noMaskEmbedding(), f, multimask);
    }

    /** _use_multimask: several masks when at most one point (box corners count) is given. */
    public static boolean multimask(int points) {
        return points <= 1;
    }

    /**
     * _encode_new_memory: the low-resolution mask upsampled to the input size, sigmoid (or, for masks from
     * prompts, binarized), x20 - 10, encoded with the frame's raw features; no_obj_embed_spatial added when the
     * object is absent; rounded to bf16 as stored.
     */
    float[] encodeMemory(FrameFeatures f, float[] lowRes, float objectScore, boolean fromPrompt) {
        if (offload != null) {
            return offload.encodeMemory(f.top(), lowRes, fromPrompt, !(objectScore > 0));
        }
        float[] high = MemoryEncoder.scaledMask(lowRes, config.lowResSize(), config.imageSize(), fromPrompt);
        float[] mem = memoryEncoder.encode(pool, f.top(), high);
        int m = config.memDim();
        if (!(objectScore > 0)) {
            for (int i = 0; i < mem.length; i++) {
                mem[i] += noObjEmbedSpatial[i % m];
            }
        }
        if (BF16_MEMORY) {
            for (int i = 0; i < mem.length; i++) {
                mem[i] = roundToBf16(mem[i]);
            }
        }
        return mem;
    }

    /** Round to nearest even bf16, as torch's float-to-bfloat16 conversion. */
    public static float roundToBf16(float x) {
        if (Float.isNaN(x)) {
            return x;
        }
        int bits = Float.floatToRawIntBits(x);
        bits += 0x7FFF + ((bits >>> 16) & 1);
        return Float.intBitsToFloat(bits & 0xFFFF0000);
    }

    @Override
    public void close() {
        try {
            if (offload != null) {
                offload.close();
            }
        } finally {
            pool.close();
        }
    }
}
