package io.samstream.stream.track.memory;

import java.util.HashMap;
import java.util.Map;

/**
 * Memory mode's visibility bookkeeping for one stream: how many frames in a row each object's object score said
 * it was not visible. A visible frame clears the count; the {@code lostAfter}-th hidden frame in a row makes the
 * object lost (and forgets it, so a re-prompted object starts from zero).
 */
public final class HiddenObjects {
    /** What one frame makes of an object. */
    public enum Verdict {
        /** Shown: its mask goes into the record. */
        VISIBLE,
        /** Not visible on this frame: listed in the record's {@code hidden} field. */
        HIDDEN,
        /** Not visible for {@code lostAfter} frames in a row: listed once in {@code lost}, its tracking ends. */
        LOST
    }

    private final int lostAfter;
    private final Map<Integer, Integer> hiddenFor = new HashMap<>();

    /** @param lostAfter hidden frames in a row after which an object is lost (at least 1) */
    public HiddenObjects(int lostAfter) {
        if (lostAfter < 1) {
            throw new IllegalArgumentException("lostAfter must be at least 1, got " + lostAfter);
        }
        this.lostAfter = lostAfter;
    }

    /** Object {@code id} on the next frame, {@code visible} or not (object score > 0). */
    public Verdict observe(int id, boolean visible) {
        if (visible) {
            hiddenFor.remove(id);
            return Verdict.VISIBLE;
        }
        int n = hiddenFor.merge(id, 1, Integer::sum);
        if (n >= lostAfter) {
            hiddenFor.remove(id);
            return Verdict.LOST;
        }
        return Verdict.HIDDEN;
    }

    /** Hidden frames in a row so far (0 when visible on its last frame, or unknown). */
    public int hiddenFor(int id) {
        return hiddenFor.getOrDefault(id, 0);
    }

    /** The object is gone (removed, re-prompted): its count starts over. */
    public void forget(int id) {
        hiddenFor.remove(id);
    }

    public void clear() {
        hiddenFor.clear();
    }
}
