package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.Linear;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;

/**
 * What the memory attention reads for one object on a tracked frame, as
 * {@code SAM2Base._prepare_memory_conditioned_features} chooses it, and the encodings added to it: shared by the CPU
 * model ({@link Sam2Model}) and the GPU tracker, which keep their banks differently.
 *
 * <ul>
 *   <li>spatial memories: every conditioning frame (temporal slot {@code numMaskmem - 1}), then the tracked frames
 *       {@code t - 6 .. t - 1} that have features (slots 5 .. 0); position = the memory map's sine encoding + the
 *       slot's {@code maskmem_tpos_enc};</li>
 *   <li>object pointers: the conditioning frames not after {@code t}, then the tracked frames {@code t - 1 .. t - 15};
 *       each split into {@code hidden / memDim} tokens, position = {@code obj_ptr_tpos_proj} of the sine encoding of
 *       its frame distance / 15.</li>
 * </ul>
 */
public final class MemoryReadout {
    /** A spatial memory: the frame it was made on and its temporal slot. */
    public record Spatial(int frame, int slot) {}

    /** An object pointer: the frame it was made on and its distance to the current frame. */
    public record Pointer(int frame, int distance) {}

    private final int tokens, memDim, hidden, numMaskmem;
    private final float[] spatialPos;
    private final float[] maskmemTpos;
    private final Linear pointerProj;

    public MemoryReadout(StateDict sd, Sam2Config config) {
        int f = config.featureSize();
        this.tokens = f * f;
        this.memDim = config.memDim();
        this.hidden = config.hidden();
        this.numMaskmem = config.numMaskmem();
        this.spatialPos = PositionEncodings.sine2d(f, f, memDim);
        this.maskmemTpos = sd.get("maskmem_tpos_enc", numMaskmem, 1, 1, memDim).data().clone();
        this.pointerProj = Linear.load(sd, "obj_ptr_tpos_proj", hidden, memDim);
    }

    /** The spatial memories frame {@code t} reads: conditioning frames in order, then the recent tracked ones. */
    public List<Spatial> spatial(List<Integer> conditioningFrames, IntPredicate trackedWithFeatures, int t) {
        List<Spatial> out = new ArrayList<>();
        for (int frame : conditioningFrames) {
            out.add(new Spatial(frame, numMaskmem - 1));
        }
        for (int back = numMaskmem - 1; back >= 1; back--) {
            if (trackedWithFeatures.test(t - back)) {
                out.add(new Spatial(t - back, back - 1));
            }
        }
        return out;
    }

    /** The object pointers frame {@code t} reads: conditioning frames up to t, then tracked frames t-1 .. t-15. */
    public List<Pointer> pointers(List<Integer> conditioningFrames, IntPredicate trackedWithPointer, int t) {
        List<Pointer> out = new ArrayList<>();
        for (int frame : conditioningFrames) {
            if (frame <= t) {
                out.add(new Pointer(frame, t - frame));
            }
        }
        for (int d = 1; d < Sam2Config.MAX_OBJECT_POINTERS && t - d >= 0; d++) {
            if (trackedWithPointer.test(t - d)) {
                out.add(new Pointer(t - d, d));
            }
        }
        return out;
    }

    /** Memory tokens of one pointer ({@code hidden / memDim}). */
    public int pointerTokens() {
        return hidden / memDim;
    }

    /** The position of a spatial memory in temporal slot {@code slot}: [f*f, memDim]. */
    public float[] spatialPosition(int slot) {
        float[] out = new float[tokens * memDim];
        for (int j = 0; j < out.length; j++) {
            out[j] = spatialPos[j] + maskmemTpos[slot * memDim + j % memDim];
        }
        return out;
    }

    /** The position of each token of a pointer {@code distance} frames back: [memDim]. */
    public float[] pointerPosition(CpuThreadPool pool, int distance) {
        return pointerPosition(pool, distance, Sam2Config.MAX_OBJECT_POINTERS);
    }

    /**
     * As above for a model that attends {@code window} pointers at most (the current frame's included): the distance
     * is encoded as a fraction of {@code window - 1} ({@code _get_tpos_enc}'s max_abs_pos).
     */
    public float[] pointerPosition(CpuThreadPool pool, int distance, int window) {
        if (window < 2) {
            throw new IllegalArgumentException("a pointer window of " + window + " (at least 2)");
        }
        float tDiffMax = window - 1;
        return pointerProj.forward(pool, PositionEncodings.sine1d(distance / tDiffMax, hidden), 1);
    }
}
