package io.samstream.gpu.sam3.video;

import io.samstream.gpu.sam3.FeatureMap;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * One object's memory in the tracker, bounded for an endless stream: its conditioning frames (where a detection's
 * mask started or re-conditioned it; the latest {@value io.samstream.gpu.sam3.Sam3TrackerConfig#MAX_CONDITIONING_FRAMES},
 * which are the ones Meta's {@code select_closest_cond_frames} attends when frames only move forward) and its
 * tracked frames, each with the memory features, the object pointer and the frame's memory-selection scores. What a
 * frame reads, and so what must be kept, is {@link MemoryPicker}'s rule; {@link #prune} drops the rest after each
 * frame, so the memory holds a fixed number of entries, a few with features, however long the stream.
 *
 * <p>It owns its features ({@link FeatureMap}, which may hold a slot of a GPU's memory): every way a memory leaves
 * it releases that memory, exactly once (an entry replaced by another for its frame, the oldest conditioning frame
 * beyond the limit, a tracked frame dropped, features no later frame reads, {@link #release} of the whole); a memory
 * moved from a tracked frame to a conditioning one ({@link #promote}) stays held. Not thread-safe (its stream's).
 */
final class ObjectMemory {
    /** One frame's memory. {@code features} is null once no later frame can read them (released then). */
    static final class Entry {
        final int frame;
        private FeatureMap features;
        float[] pointer;
        /** This object's {@code cal_mem_score} on the frame. */
        final float ownScore;
        /** The score memory selection compares: the mean of {@code ownScore} over the object's cohort. */
        float selectionScore;

        Entry(int frame, FeatureMap features, float[] pointer, float ownScore) {
            this.frame = frame;
            this.features = features;
            this.pointer = pointer;
            this.ownScore = ownScore;
            this.selectionScore = ownScore;
        }

        /** The features, or null once dropped. */
        FeatureMap features() {
            return features;
        }
    }

    private final int maxConditioning;
    private final List<Entry> conditioning = new ArrayList<>();
    private final TreeMap<Integer, Entry> tracked = new TreeMap<>();

    ObjectMemory(int maxConditioning) {
        if (maxConditioning < 1) {
            throw new IllegalArgumentException("maxConditioning " + maxConditioning);
        }
        this.maxConditioning = maxConditioning;
    }

    /**
     * A conditioning frame (the object's first, or a re-conditioned one) with these features, which it now owns; the
     * oldest beyond the limit goes, and an entry of the same frame is replaced.
     */
    void addConditioning(int frame, FeatureMap features, float[] pointer) {
        if (features == null) {
            throw new IllegalArgumentException("a conditioning frame needs its features");
        }
        Entry old = tracked.remove(frame);
        if (old != null) {
            releaseUnless(old, features);
        }
        for (java.util.Iterator<Entry> it = conditioning.iterator(); it.hasNext(); ) {
            Entry e = it.next();
            if (e.frame == frame) {
                it.remove();
                releaseUnless(e, features);
            }
        }
        conditioning.add(new Entry(frame, features, pointer, 0f));
        conditioning.sort((a, b) -> Integer.compare(a.frame, b.frame));
        while (conditioning.size() > maxConditioning) {
            releaseUnless(conditioning.remove(0), null);
        }
    }

    /** A tracked frame with these features, which it now owns (an earlier entry of the frame is replaced). */
    void addTracked(int frame, FeatureMap features, float[] pointer, float ownScore) {
        if (conditioning.stream().anyMatch(e -> e.frame == frame)) {
            throw new IllegalStateException("frame " + frame + " is already a conditioning frame");
        }
        Entry old = tracked.put(frame, new Entry(frame, features, pointer, ownScore));
        if (old != null) {
            releaseUnless(old, features);
        }
    }

    /**
     * Makes a tracked frame a conditioning frame, with another pointer when {@code pointer} is not null (the
     * re-conditioned object's; its cohort keeps theirs). Its features move with it.
     */
    void promote(int frame, float[] pointer) {
        Entry e = tracked.get(frame);
        if (e == null) {
            throw new IllegalStateException("frame " + frame + " was not tracked");
        }
        if (e.features == null) {
            throw new IllegalStateException("frame " + frame + "'s features were dropped");
        }
        addConditioning(frame, e.features, pointer != null ? pointer : e.pointer);
    }

    List<Entry> conditioningFrames() {
        return conditioning;
    }

    /** The tracked frame's entry, or null. */
    Entry tracked(int frame) {
        return tracked.get(frame);
    }

    /** Tracked entries, by frame. */
    NavigableMap<Integer, Entry> trackedFrames() {
        return tracked;
    }

    void dropTracked(int frame) {
        Entry e = tracked.remove(frame);
        if (e != null) {
            releaseUnless(e, null);
        }
    }

    /** Drops (and releases) a tracked frame's features, keeping its pointer and scores. */
    void dropFeatures(int frame) {
        Entry e = tracked.get(frame);
        if (e != null) {
            releaseUnless(e, null);
        }
    }

    /** Releases every memory it holds and forgets every entry: the object is gone. */
    void release() {
        for (Entry e : conditioning) {
            releaseUnless(e, null);
        }
        for (Entry e : tracked.values()) {
            releaseUnless(e, null);
        }
        conditioning.clear();
        tracked.clear();
    }

    /** Releases {@code e}'s features unless they are {@code kept} (the same memory moving on); they are gone from it. */
    private static void releaseUnless(Entry e, FeatureMap kept) {
        FeatureMap f = e.features;
        e.features = null;
        if (f != null && f != kept) {
            f.release();
        }
    }

    /** Floats held (features and pointers), wherever the features are: constant once the stream is past the horizons. */
    long heldFloats() {
        long n = 0;
        for (Entry e : conditioning) {
            n += (e.features == null ? 0 : e.features.length()) + e.pointer.length;
        }
        for (Entry e : tracked.values()) {
            n += (e.features == null ? 0 : e.features.length()) + e.pointer.length;
        }
        return n;
    }

    /** Memories with features held. */
    int heldMemories() {
        int n = 0;
        for (Entry e : conditioning) {
            n += e.features == null ? 0 : 1;
        }
        for (Entry e : tracked.values()) {
            n += e.features == null ? 0 : 1;
        }
        return n;
    }

    int entries() {
        return conditioning.size() + tracked.size();
    }
}
