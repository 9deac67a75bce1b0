package io.samstream.gpu.sam3.video;

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
 */
final class ObjectMemory {
    /** One frame's memory. {@code features} is null once no later frame can read them. */
    static final class Entry {
        final int frame;
        float[] features;
        float[] pointer;
        /** This object's {@code cal_mem_score} on the frame. */
        final float ownScore;
        /** The score memory selection compares: the mean of {@code ownScore} over the object's cohort. */
        float selectionScore;

        Entry(int frame, float[] features, float[] pointer, float ownScore) {
            this.frame = frame;
            this.features = features;
            this.pointer = pointer;
            this.ownScore = ownScore;
            this.selectionScore = ownScore;
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

    /** A conditioning frame (the object's first, or a re-conditioned one); the oldest beyond the limit goes. */
    void addConditioning(int frame, float[] features, float[] pointer) {
        tracked.remove(frame);
        conditioning.removeIf(e -> e.frame == frame);
        conditioning.add(new Entry(frame, features, pointer, 0f));
        conditioning.sort((a, b) -> Integer.compare(a.frame, b.frame));
        while (conditioning.size() > maxConditioning) {
            conditioning.remove(0);
        }
    }

    void addTracked(int frame, float[] features, float[] pointer, float ownScore) {
        if (conditioning.stream().anyMatch(e -> e.frame == frame)) {
            throw new IllegalStateException("frame " + frame + " is already a conditioning frame");
        }
        tracked.put(frame, new Entry(frame, features, pointer, ownScore));
    }

    /**
     * Makes a tracked frame a conditioning frame, with another pointer when {@code pointer} is not null (the
     * re-conditioned object's; its cohort keeps theirs).
     */
    void promote(int frame, float[] pointer) {
        Entry e = tracked.get(frame);
        if (e == null) {
            throw new IllegalStateException("frame " + frame + " was not tracked");
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
        tracked.remove(frame);
    }

    /** Floats held (features and pointers): constant once the stream is past the horizons. */
    long heldFloats() {
        long n = 0;
        for (Entry e : conditioning) {
            n += (e.features == null ? 0 : e.features.length) + e.pointer.length;
        }
        for (Entry e : tracked.values()) {
            n += (e.features == null ? 0 : e.features.length) + e.pointer.length;
        }
        return n;
    }

    int entries() {
        return conditioning.size() + tracked.size();
    }
}
