package io.samstream.gpu.sam2;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One object's memory, as SAM2VideoPredictor keeps it when it propagates forward, bounded for an endless
 * stream.
 *
 * <p>Conditioning frames (where the object was prompted) are all attended, in the order they came, up to
 * {@code maxConditioning} (then the oldest goes; Meta's predictor keeps them all). Of the tracked frames, the
 * memory features of the last {@code numMaskmem - 1} (6) and the object pointers of the last
 * {@code MAX_OBJECT_POINTERS - 1} (15) are all that any later frame reads, so nothing older is kept: the
 * bank holds at most maxConditioning + 15 entries, 6 of them with features, whatever the stream's length.
 */
public final class MemoryBank {
    /** One frame's memory: features [f*f, memDim] (bf16-rounded, as the reference stores them) and pointer [hidden]. */
    public record Entry(int frame, float[] features, float[] pointer) {}

    private final int numMaskmem;
    private final int maxConditioning;
    private final Map<Integer, Entry> conditioning = new LinkedHashMap<>();
    private final TreeMap<Integer, Entry> tracked = new TreeMap<>();

    public MemoryBank(int numMaskmem, int maxConditioning) {
        if (numMaskmem < 1 || maxConditioning < 1) {
            throw new IllegalArgumentException("numMaskmem " + numMaskmem + ", maxConditioning " + maxConditioning);
        }
        this.numMaskmem = numMaskmem;
        this.maxConditioning = maxConditioning;
    }

    public void addConditioning(Entry e) {
        tracked.remove(e.frame());
        conditioning.remove(e.frame());
        conditioning.put(e.frame(), e);
        while (conditioning.size() > maxConditioning) {
            Iterator<Integer> it = conditioning.keySet().iterator();
            it.next();
            it.remove();
        }
        prune(e.frame());
    }

    public void addTracked(Entry e) {
        if (conditioning.containsKey(e.frame())) {
            throw new IllegalStateException("frame " + e.frame() + " is already a conditioning frame");
        }
        tracked.put(e.frame(), e);
        prune(e.frame());
    }

    /** After frame t is stored, frame t+1 reads features back to t-(numMaskmem-2), pointers back to t-14. */
    private void prune(int t) {
        int pointerHorizon = t - (Sam2Config.MAX_OBJECT_POINTERS - 2);
        int featureHorizon = t - (numMaskmem - 2);
        tracked.headMap(pointerHorizon, false).clear();
        for (Map.Entry<Integer, Entry> me : tracked.headMap(featureHorizon, false).entrySet()) {
            Entry e = me.getValue();
            if (e.features() != null) {
                me.setValue(new Entry(e.frame(), null, e.pointer()));
            }
        }
    }

    public boolean isEmpty() {
        return conditioning.isEmpty();
    }

    public List<Entry> conditioningFrames() {
        return new ArrayList<>(conditioning.values());
    }

    /** The tracked frame's entry, or null. */
    public Entry tracked(int frame) {
        return tracked.get(frame);
    }

    public int trackedCount() {
        return tracked.size();
    }

    /** Floats held (features and pointers): constant once the stream is past the horizons. */
    public long heldFloats() {
        long n = 0;
        for (Entry e : conditioning.values()) {
            n += e.features().length + e.pointer().length;
        }
        for (Entry e : tracked.values()) {
            n += (e.features() == null ? 0 : e.features().length) + e.pointer().length;
        }
        return n;
    }
}
