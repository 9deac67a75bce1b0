package io.samstream.gpu.sam3.video;

import io.samstream.gpu.sam3.FeatureMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Which memories a tracked frame reads, as {@code Sam3TrackerBase._prepare_memory_conditioned_features} chooses them
 * when frames only move forward, and what an {@link ObjectMemory} must therefore keep.
 *
 * <p>Every conditioning frame (temporal slot {@code numMaskmem - 1}, pointer at its distance in frames), then:
 * <ul>
 *   <li><b>memory selection</b> (Meta's default, {@code use_memory_selection}, SAM2Long's frame filter): the
 *       "recent" list is the last {@code window - 1} tracked frames whose selection score passes the threshold
 *       (0.01), oldest first, with the previous frame appended when it is not among them (even when it is a
 *       conditioning frame, which then reads nothing there). Spatial memories come from its last {@code numMaskmem
 *       - 1} places (slot = places from the end - 1), pointers from its last places but the first, each at its place
 *       from the end (a rank, not a distance in frames);</li>
 *   <li><b>without</b> it (SAM 2.1's rule): the tracked frames 1 to {@code numMaskmem - 1} back (slot = frames back
 *       - 1) and the pointers of the frames 1 to {@code window - 1} back, at their distance.</li>
 * </ul>
 * {@code window} is the pointers attended at most, the current frame's included ({@code max_obj_ptrs_in_encoder},
 * 16; Meta uses min(16, the video's length), so a parity run over a short clip gives that).
 */
final class MemoryPicker {
    private final boolean selection;
    private final int numMaskmem;
    private final int window;
    private final float threshold;

    MemoryPicker(boolean selection, int numMaskmem, int window, float threshold) {
        if (numMaskmem < 2 || window < 2) {
            throw new IllegalArgumentException("numMaskmem " + numMaskmem + " and pointer window " + window
                    + " must be at least 2");
        }
        this.selection = selection;
        this.numMaskmem = numMaskmem;
        this.window = window;
        this.threshold = threshold;
    }

    int window() {
        return window;
    }

    /** What frame {@code t} reads. */
    record Picked(List<Sam3TrackerModel.Spatial> spatial, List<Sam3TrackerModel.Pointer> pointers) {}

    Picked pick(ObjectMemory memory, int t) {
        List<Sam3TrackerModel.Spatial> spatial = new ArrayList<>();
        List<Sam3TrackerModel.Pointer> pointers = new ArrayList<>();
        for (ObjectMemory.Entry e : memory.conditioningFrames()) {
            spatial.add(new Sam3TrackerModel.Spatial(features(e), numMaskmem - 1));
        }
        List<Integer> recent = selection ? recent(memory, t) : null;
        for (int tPos = 1; tPos < numMaskmem; tPos++) {
            int back = numMaskmem - tPos;
            int frame;
            if (selection) {
                if (back > recent.size()) {
                    continue;
                }
                frame = recent.get(recent.size() - back);
            } else {
                frame = t - back;
            }
            ObjectMemory.Entry e = memory.tracked(frame);
            if (e != null) {
                spatial.add(new Sam3TrackerModel.Spatial(features(e), back - 1));
            }
        }
        for (ObjectMemory.Entry e : memory.conditioningFrames()) {
            if (e.frame <= t) {
                pointers.add(new Sam3TrackerModel.Pointer(e.pointer, t - e.frame));
            }
        }
        for (int d = 1; d < window; d++) {
            int frame;
            if (selection) {
                if (d >= recent.size()) {
                    break;
                }
                frame = recent.get(recent.size() - d);
            } else {
                frame = t - d;
                if (frame < 0) {
                    break;
                }
            }
            ObjectMemory.Entry e = memory.tracked(frame);
            if (e != null) {
                pointers.add(new Sam3TrackerModel.Pointer(e.pointer, d));
            }
        }
        return new Picked(spatial, pointers);
    }

    /** Memory selection's list for frame t: the last window - 1 selected tracked frames, and t - 1. */
    List<Integer> recent(ObjectMemory memory, int t) {
        List<Integer> out = new ArrayList<>();
        if (t == 0) {
            return out;
        }
        for (Map.Entry<Integer, ObjectMemory.Entry> me : memory.trackedFrames().headMap(t, false).descendingMap()
                .entrySet()) {
            if (me.getKey() < 1) {
                break;
            }
            if (me.getValue().selectionScore > threshold) {
                out.add(0, me.getKey());
            }
            if (out.size() >= window - 1) {
                break;
            }
        }
        if (!out.contains(t - 1)) {
            out.add(t - 1);
        }
        return out;
    }

    /** After frame t is stored: drops (and releases) what frame t + 1 and later cannot read. */
    void prune(ObjectMemory memory, int t) {
        List<Integer> drop = new ArrayList<>();
        if (selection) {
            // t + 1 reads the last window - 1 selected frames and t; features from the last numMaskmem - 1 of them
            int rank = 0;
            for (Map.Entry<Integer, ObjectMemory.Entry> me : memory.trackedFrames().descendingMap().entrySet()) {
                int frame = me.getKey();
                ObjectMemory.Entry e = me.getValue();
                boolean latest = frame == t;
                boolean selected = e.selectionScore > threshold;
                if (selected) {
                    rank++;
                }
                if (!latest && !(selected && rank <= window - 1)) {
                    drop.add(frame);
                } else if (!latest && rank > numMaskmem - 1) {
                    memory.dropFeatures(frame);
                }
            }
        } else {
            for (Map.Entry<Integer, ObjectMemory.Entry> me : memory.trackedFrames().entrySet()) {
                int frame = me.getKey();
                if (frame < t + 1 - (window - 1)) {
                    drop.add(frame);
                } else if (frame < t + 1 - (numMaskmem - 1)) {
                    memory.dropFeatures(frame);
                }
            }
        }
        drop.forEach(memory::dropTracked);
    }

    private static FeatureMap features(ObjectMemory.Entry e) {
        if (e.features() == null) {
            throw new IllegalStateException("frame " + e.frame + "'s memory features were dropped but are read");
        }
        return e.features();
    }
}
