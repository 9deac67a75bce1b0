package io.samstream.gpu.sam3.video;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import java.util.List;

/**
 * The tracker's passes a concept's step calls: the fp32 CPU reference ({@link Sam3TrackerModel}), a GPU's (opened by
 * a {@link Factory} given to {@link Sam3VideoModel}), or a test's script that drives the rules with known masks. Every
 * stream of a model shares its passes; the model's streams step one at a time.
 */
public interface TrackerPasses extends AutoCloseable {
    Sam3TrackerConfig config();

    /**
     * A frame's tracker features from the tracker neck's levels ([(4g)², d], [(2g)², d], [g², d]; see {@link
     * Sam3TrackerModel#features}): where these passes keep them (the CPU reference: on the host; a GPU's: in its
     * slots, from levels that a backend on the same GPU left there). The caller releases the frame after its step.
     */
    TrackerFrame features(CpuThreadPool pool, FeatureMap[] levels);

    /** See {@link Sam3TrackerModel#propagate}. */
    Propagation propagate(CpuThreadPool pool, TrackerFrame f, List<Sam3TrackerModel.Spatial> spatial,
            List<Sam3TrackerModel.Pointer> pointers, int pointerWindow);

    /**
     * {@link #propagate} for each of a frame's objects, in order (what a concept's step needs at once). The passes
     * may run them together and wait once; by default one after the other.
     */
    default List<Propagation> propagateAll(CpuThreadPool pool, TrackerFrame f, List<Sam3TrackerModel.Reads> objects,
            int pointerWindow) {
        List<Propagation> out = new java.util.ArrayList<>(objects.size());
        for (Sam3TrackerModel.Reads r : objects) {
            out.add(propagate(pool, f, r.spatial(), r.pointers(), pointerWindow));
        }
        return out;
    }

    /** See {@link Sam3TrackerModel#pointerFromMask}. */
    float[] pointerFromMask(CpuThreadPool pool, TrackerFrame f, boolean[] mask);

    /**
     * See {@link Sam3TrackerModel#encodeMemory}: the memory where these passes keep it (the CPU reference: a host array;
     * a GPU's: a device slot). The caller owns it and {@link FeatureMap#release}s it when no frame reads it again.
     */
    FeatureMap encodeMemory(CpuThreadPool pool, TrackerFrame f, float[] scaledMask, boolean present);

    /**
     * The memories of a concept's objects on a tracked frame ({@code _tracker_update_memories}): their low-resolution
     * masks [lowRes²] upsampled to the encoder's square, the pixel-wise shrinkage rule across all of them
     * ({@link #SHRINK_THRESHOLD}), then {@link #encodeMemory} for each {@code wanted} object (null for the others,
     * which still count in the rule), present when its area after the rule is not 0. By default {@link
     * MemoryMasks#fromTracked} on the host; a GPU's passes take the small masks up and do all of it there.
     */
    default List<FeatureMap> encodeTrackedMemories(CpuThreadPool pool, TrackerFrame f, float[][] lowRes,
            boolean[] wanted) {
        MemoryMasks.Tracked inputs = MemoryMasks.fromTracked(pool, lowRes, config().lowResSize(), config().maskSize(),
                wanted);
        List<FeatureMap> out = new java.util.ArrayList<>(lowRes.length);
        for (int k = 0; k < lowRes.length; k++) {
            out.add(wanted[k] ? encodeMemory(pool, f, inputs.scaled()[k], inputs.present()[k]) : null);
        }
        return out;
    }

    /** An object that keeps less than this fraction of its area under the pixel-wise rule is suppressed whole. */
    float SHRINK_THRESHOLD = MaskOverlaps.SHRINK_THRESHOLD;

    /** Where the passes run, for logs and masks.json, e.g. "memory attention ... on GPU (bf16)"; null: the CPU. */
    default String describe() {
        return null;
    }

    /** Frees what the passes hold beyond the CPU model (a GPU's memory); the CPU reference holds nothing. */
    @Override
    default void close() {}

    /** Makes a video model's tracker passes from its checkpoint (sam3.pt), the tracker's shape and its CPU model. */
    @FunctionalInterface
    interface Factory {
        TrackerPasses open(StateDict checkpoint, Sam3TrackerConfig config, Sam3TrackerModel cpu);

        /** The CPU reference itself. */
        static Factory cpu() {
            return (checkpoint, config, cpu) -> cpu;
        }
    }
}
