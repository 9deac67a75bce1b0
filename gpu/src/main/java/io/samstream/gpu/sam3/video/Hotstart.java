package io.samstream.gpu.sam3.video;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Meta's hot-start heuristic ({@code Sam3VideoBase._process_hotstart}) for one concept's objects: an object still
 * within {@code delay} frames of its first frame is removed once it has been <i>unmatched</i> (its tracked mask not
 * empty but overlapping no detection) on {@code unmatchedLimit} frames, or a <i>duplicate</i> (matched by one
 * detection together with an object that appeared earlier) on {@code duplicateLimit} frames. Counts are per object
 * (duplicates per pair). Delay 0 turns it off.
 *
 * <p>Meta keeps every count for the whole video; here an object's counts are dropped once it is past the delay
 * (no rule can remove it any more) or gone, so the bookkeeping stays bounded on an endless stream. Meta also holds
 * a session's outputs back by {@code delay} frames so that a removed object never shows; a stream cannot wait, so
 * an object shows from its first frame and stops showing when removed.
 */
final class Hotstart {
    private final int delay;
    private final int unmatchedLimit;
    private final int duplicateLimit;
    private final Map<Long, Integer> firstFrame = new HashMap<>();
    private final Map<Long, Integer> unmatched = new HashMap<>();
    /** (earlier object, later object) to frames matched together. */
    private final Map<List<Long>, Integer> duplicates = new HashMap<>();

    Hotstart(int delay, int unmatchedLimit, int duplicateLimit) {
        this.delay = delay;
        this.unmatchedLimit = unmatchedLimit;
        this.duplicateLimit = duplicateLimit;
    }

    /**
     * One detection frame: the objects created on it, the tracked objects found unmatched, and per detection the
     * objects it matched (in creation order); returns the objects to remove now.
     */
    Set<Long> step(int frame, List<Long> created, List<Long> unmatchedIds, List<List<Long>> matchedPerDetection) {
        Set<Long> removed = new HashSet<>();
        if (delay <= 0) {
            return removed;
        }
        for (long id : created) {
            firstFrame.putIfAbsent(id, frame);
        }
        for (long id : unmatchedIds) {
            if (within(id, frame)) {
                unmatched.merge(id, 1, Integer::sum);
            }
        }
        for (Map.Entry<Long, Integer> e : unmatched.entrySet()) {
            if (e.getValue() >= unmatchedLimit && within(e.getKey(), frame)) {
                removed.add(e.getKey());
            }
        }
        for (List<Long> ids : matchedPerDetection) {
            if (ids.size() < 2) {
                continue;
            }
            long first = ids.get(0);
            for (long id : ids) {
                if (firstFrame.getOrDefault(id, Integer.MIN_VALUE) < firstFrame.getOrDefault(first, Integer.MIN_VALUE)) {
                    first = id;
                }
            }
            for (long id : ids) {
                if (id != first && within(id, frame)) {
                    duplicates.merge(List.of(first, id), 1, Integer::sum);
                }
            }
        }
        for (Map.Entry<List<Long>, Integer> e : duplicates.entrySet()) {
            long later = e.getKey().get(1);
            if (!removed.contains(later) && within(later, frame) && e.getValue() >= duplicateLimit) {
                removed.add(later);
            }
        }
        for (long id : removed) {
            forget(id);
        }
        expire(frame);
        return removed;
    }

    /** The object is gone: its counts too. */
    void forget(long id) {
        firstFrame.remove(id);
        unmatched.remove(id);
        duplicates.keySet().removeIf(k -> k.get(0) == id || k.get(1) == id);
    }

    /** Objects and pairs counted (bounded by the objects within the delay). */
    int size() {
        return firstFrame.size() + unmatched.size() + duplicates.size();
    }

    private boolean within(long id, int frame) {
        Integer first = firstFrame.get(id);
        return first != null && first > frame - delay;
    }

    /** Objects past the delay can no longer be removed: their counts go (an earlier object of a pair may stay). */
    private void expire(int frame) {
        for (Iterator<Map.Entry<Long, Integer>> it = firstFrame.entrySet().iterator(); it.hasNext();) {
            Map.Entry<Long, Integer> e = it.next();
            if (e.getValue() <= frame - delay) {
                long id = e.getKey();
                unmatched.remove(id);
                duplicates.keySet().removeIf(k -> k.get(1) == id);
                boolean earlierOfPair = duplicates.keySet().stream().anyMatch(k -> k.get(0) == id);
                if (!earlierOfPair) {
                    it.remove();
                }
            }
        }
    }
}
