package io.samstream.gpu.sam3.video;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.Conv2d;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.Mlp;
import io.samstream.gpu.sam2.FrameFeatures;
import io.samstream.gpu.sam2.MemoryAttention;
import io.samstream.gpu.sam2.MemoryEncoder;
import io.samstream.gpu.sam2.MemoryReadout;
import io.samstream.gpu.sam2.PositionEncodings;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2MaskDecoder;
import io.samstream.gpu.sam2.Sam2Model;
import io.samstream.gpu.sam2.Sam2PromptEncoder;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Sam3Checkpoint;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import java.util.List;

/**
 * SAM 3's tracker in fp32 on the CPU ({@code Sam3TrackerBase} at inference): SAM 2.1's parts loaded from the
 * {@code tracker.*} keys under SAM 2.1's names ({@link Sam3Checkpoint#tracker}) - memory attention, memory encoder,
 * memory readout encodings, prompt encoder, mask decoder - and the one SAM 3 adds for its video path, a
 * detection's mask as the prompt that makes a new object's pointer ({@link MaskPrompt}).
 *
 * <p>The passes, each Meta's method of the same role: {@link #features} ({@code forward_image} on the second
 * neck's levels), {@link #propagate} ({@code _prepare_memory_conditioned_features} + {@code _forward_sam_heads}
 * without prompts, several masks, the best by IoU), {@link #pointerFromMask} ({@code _use_mask_as_output}'s
 * pointer) and {@link #encodeMemory} ({@code _encode_new_memory}). Which memories a frame reads is the caller's
 * ({@link MemoryPicker}).
 */
public final class Sam3TrackerModel implements TrackerPasses {
    /** The low-resolution mask of an object judged absent ({@code NO_OBJ_SCORE}). */
    public static final float NO_OBJECT_SCORE = -1024f;

    private final Sam3TrackerConfig config;
    private final Sam2PromptEncoder promptEncoder;
    private final Sam2MaskDecoder maskDecoder;
    private final MemoryAttention memoryAttention;
    private final MemoryEncoder memoryEncoder;
    private final MemoryReadout readout;
    private final Mlp objPtrProj;
    private final float[] noObjPtr;
    private final float[] noObjEmbedSpatial;
    private final Conv2d convS0;
    private final Conv2d convS1;
    private final MaskPrompt maskPrompt;
    private final float[] topPos;
    private final float[][] spatialPositions;

    /** A spatial memory the frame attends: the features [grid², memDim] and their temporal slot (0..numMaskmem-1). */
    public record Spatial(FeatureMap features, int slot) {
        /** Features held on the host. */
        public Spatial(float[] features, int slot) {
            this(FeatureMap.of(features), slot);
        }
    }

    /**
     * An object pointer [hidden] the frame attends and its temporal position (frames back, or a rank under memory
     * selection).
     */
    public record Pointer(float[] pointer, int distance) {}

    /** What one object reads on a tracked frame: its spatial memories and its pointers (as {@link #propagate} takes). */
    public record Reads(List<Spatial> spatial, List<Pointer> pointers) {}

    /**
     * What the memory attention reads for one object on one frame: {@code memory} and its position {@code pos}, both
     * [tokens, memDim], the spatial memories first (grid² rows each), then the last {@code pointerTokens} rows, the
     * pointers split into hidden / memDim tokens each.
     */
    public record MemoryInputs(float[] memory, float[] pos, int tokens, int pointerTokens) {}

    /** The tracker of a checkpoint (Meta's sam3.pt) with its configuration ({@code Sam3ConfigInference}). */
    public Sam3TrackerModel(StateDict checkpoint, Sam3TrackerConfig config) {
        this.config = config;
        StateDict sd = Sam3Checkpoint.tracker(checkpoint);
        Sam2Config parts = config.sam2Parts();
        int c = config.hidden();
        this.promptEncoder = new Sam2PromptEncoder(sd, parts);
        this.maskDecoder = new Sam2MaskDecoder(sd, parts);
        this.memoryAttention = new MemoryAttention(sd, parts);
        this.memoryEncoder = new MemoryEncoder(sd, parts);
        this.readout = new MemoryReadout(sd, parts);
        this.objPtrProj = Mlp.load(sd, "obj_ptr_proj", c, c, c, 3);
        this.noObjPtr = sd.get("no_obj_ptr", 1, c).data().clone();
        this.noObjEmbedSpatial = sd.get("no_obj_embed_spatial", 1, config.memDim()).data().clone();
        this.convS0 = Conv2d.load(sd, "sam_mask_decoder.conv_s0", c, c / 8, 1, 1, 0, true);
        this.convS1 = Conv2d.load(sd, "sam_mask_decoder.conv_s1", c, c / 4, 1, 1, 0, true);
        this.maskPrompt = new MaskPrompt(sd, config.maskSize(), config.maskInChans(), c);
        this.topPos = PositionEncodings.sine2d(config.grid(), config.grid(), c);
        this.spatialPositions = new float[config.numMaskmem()][];
        for (int slot = 0; slot < config.numMaskmem(); slot++) {
            spatialPositions[slot] = readout.spatialPosition(slot);
        }
    }

    @Override
    public Sam3TrackerConfig config() {
        return config;
    }

    /**
     * A frame's tracker features from the second neck's levels ({@code Sam3Model.trackerLevels}): the top level
     * with its sine position encoding, and the decoder's {@code conv_s0} / {@code conv_s1} on the 4x and 2x levels.
     */
    public FrameFeatures features(CpuThreadPool pool, float[][] levels) {
        int g = config.grid();
        int c = config.hidden();
        if (levels.length != 3 || levels[2].length != g * g * c) {
            throw new IllegalArgumentException("tracker levels must be [(4g)², d], [(2g)², d], [g², d] with g " + g
                    + " and d " + c);
        }
        float[] s0 = convS0.forward(pool, levels[0], 4 * g, 4 * g);
        float[] s1 = convS1.forward(pool, levels[1], 2 * g, 2 * g);
        return new FrameFeatures(levels[2], topPos, s0, s1, g);
    }

    /** The sine position encoding of the top level, [g², hidden] (what {@link FrameFeatures#topPos} holds). */
    public float[] topPosition() {
        return topPos;
    }

    /** {@link #features(CpuThreadPool, float[][])} of the levels' values, on the host. */
    @Override
    public TrackerFrame features(CpuThreadPool pool, FeatureMap[] levels) {
        return TrackerFrame.of(features(pool, FeatureMap.values(levels)));
    }

    @Override
    public Propagation propagate(CpuThreadPool pool, TrackerFrame f, List<Spatial> spatial, List<Pointer> pointers,
            int pointerWindow) {
        return propagate(pool, f.host(), spatial, pointers, pointerWindow);
    }

    @Override
    public float[] pointerFromMask(CpuThreadPool pool, TrackerFrame f, boolean[] mask) {
        return pointerFromMask(pool, f.host(), mask);
    }

    @Override
    public FeatureMap encodeMemory(CpuThreadPool pool, TrackerFrame f, float[] scaledMask, boolean present) {
        return encodeMemory(pool, f.host(), scaledMask, present);
    }

    /**
     * The object on a tracked frame: the frame's features conditioned on its memories and pointers (the pointers'
     * distances encoded as fractions of {@code pointerWindow - 1}), decoded without prompts into three masks, the
     * best by predicted IoU; mask and pointer replaced by the no-object ones when the object score is not positive.
     */
    public Propagation propagate(CpuThreadPool pool, FrameFeatures f, List<Spatial> spatial, List<Pointer> pointers,
            int pointerWindow) {
        MemoryInputs in = memoryInputs(pool, spatial, pointers, pointerWindow);
        float[] image = memoryAttention.forward(pool, f.top(), f.topPos(), f.side() * f.side(), in.memory(), in.pos(),
                in.tokens(), in.pointerTokens());
        Sam2MaskDecoder.Output out = maskDecoder.decode(pool, image, paddingPoint(), 2, promptEncoder.densePe(),
                promptEncoder.noMaskEmbedding(), f, true);
        int best = Sam2MaskDecoder.argmax(out.ious());
        float[] lowRes = out.masks()[best].clone();
        float[] pointer;
        if (out.objectScore() > 0) {
            pointer = objPtrProj.forward(pool, out.tokens()[best], 1);
        } else {
            java.util.Arrays.fill(lowRes, NO_OBJECT_SCORE);
            pointer = noObjPtr.clone();
        }
        return new Propagation(lowRes, out.objectScore(), pointer, out.ious()[best]);
    }

    /**
     * The memory attention's inputs for one object on a tracked frame ({@code _prepare_memory_conditioned_features}):
     * each spatial memory with its slot's position ({@link MemoryReadout#spatialPosition}), then each pointer split
     * into hidden / memDim tokens, all with the encoding of its distance as a fraction of {@code pointerWindow - 1}.
     * The CPU and GPU passes both read these.
     */
    public MemoryInputs memoryInputs(CpuThreadPool pool, List<Spatial> spatial, List<Pointer> pointers,
            int pointerWindow) {
        int n = config.grid() * config.grid();
        int m = config.memDim();
        int split = config.hidden() / m;
        int spatialTokens = spatial.size() * n;
        int pointerTokens = pointers.size() * split;
        int total = spatialTokens + pointerTokens;
        if (total == 0) {
            throw new IllegalStateException("a tracked frame with no memory: an object starts on a conditioning frame");
        }
        float[] memory = new float[total * m];
        float[] pos = new float[total * m];
        for (int i = 0; i < spatial.size(); i++) {
            System.arraycopy(spatial.get(i).features().values(), 0, memory, i * n * m, n * m);
            System.arraycopy(spatialPositions[spatial.get(i).slot()], 0, pos, i * n * m, n * m);
        }
        for (int i = 0; i < pointers.size(); i++) {
            float[] ptr = pointers.get(i).pointer();
            float[] enc = pointerPosition(pool, pointers.get(i).distance(), pointerWindow);
            for (int s = 0; s < split; s++) {
                int row = spatialTokens + i * split + s;
                System.arraycopy(ptr, s * m, memory, row * m, m);
                System.arraycopy(enc, 0, pos, row * m, m);
            }
        }
        return new MemoryInputs(memory, pos, total, pointerTokens);
    }

    /** The position [grid² x memDim] of a spatial memory in temporal slot {@code slot}: what {@link #memoryInputs} puts. */
    public float[] spatialPosition(int slot) {
        return spatialPositions[slot].clone();
    }

    /** The position [memDim] of each token of a pointer at {@code distance}: what {@link #memoryInputs} puts. */
    public float[] pointerPosition(CpuThreadPool pool, int distance, int pointerWindow) {
        return readout.pointerPosition(pool, distance, pointerWindow);
    }

    /**
     * A new (or re-conditioned) object's pointer from its mask ([maskSize²], binary), as {@code _use_mask_as_output}
     * makes it: the mask as the decoder's dense prompt against the frame's own features (no memory), one mask; the
     * pointer is the projected first mask token when both the decoder's object score is positive and the mask is
     * not empty, else the no-object pointer.
     */
    public float[] pointerFromMask(CpuThreadPool pool, FrameFeatures f, boolean[] mask) {
        if (empty(mask)) {
            return noObjectPointer();
        }
        Sam2MaskDecoder.Output out = maskDecoder.decode(pool, f.top(), paddingPoint(), 2, promptEncoder.densePe(),
                maskPromptEmbedding(pool, mask), f, false);
        return out.objectScore() > 0 ? objPtrProj.forward(pool, out.tokens()[0], 1) : noObjectPointer();
    }

    /**
     * The dense prompt [grid², hidden] of a binary mask [maskSize²]: what {@link #pointerFromMask} gives the decoder
     * in place of {@code no_mask_embed} (the GPU's passes make it here and run the decoder on it).
     */
    public float[] maskPromptEmbedding(CpuThreadPool pool, boolean[] mask) {
        float[] m = new float[mask.length];
        for (int i = 0; i < mask.length; i++) {
            m[i] = mask[i] ? 1f : 0f;
        }
        return maskPrompt.embed(pool, m);
    }

    /** {@code no_obj_ptr}: the pointer of an object judged absent (a copy). */
    public float[] noObjectPointer() {
        return noObjPtr.clone();
    }

    /** Whether a mask has no pixel set: its object's pointer is {@link #noObjectPointer} whatever the decoder says. */
    public static boolean empty(boolean[] mask) {
        for (boolean b : mask) {
            if (b) {
                return false;
            }
        }
        return true;
    }

    /**
     * A frame's memory features [grid², memDim] of the object's mask input (already scaled: values in [-10, 10] at
     * maskSize², see {@link MemoryMasks}), with the no-object embedding added when it is absent, rounded to bf16 as
     * the predictor stores them; held on the host ({@link FeatureMap#of}).
     */
    public FeatureMap encodeMemory(CpuThreadPool pool, FrameFeatures f, float[] scaledMask, boolean present) {
        float[] mem = memoryEncoder.encode(pool, f.top(), scaledMask);
        int m = config.memDim();
        for (int i = 0; i < mem.length; i++) {
            float v = present ? mem[i] : mem[i] + noObjEmbedSpatial[i % m];
            mem[i] = Sam2Model.roundToBf16(v);
        }
        return FeatureMap.of(mem);
    }

    /** The padding point the decoder gets when there are no points (the encoder appends a second one). */
    private float[] paddingPoint() {
        return promptEncoder.sparse(new float[][] {{0f, 0f}}, new int[] {-1});
    }
}
