package io.samstream.bench.track;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Predicted objects that are never any ground-truth object: ids that had a non-empty mask in some frame
 * but were matched ({@link FrameMatching}) in none (a discovered piece of background, a duplicate that
 * always lost to its twin, a prompt that never found its object).
 */
public final class FalseTracks {
    private FalseTracks() {}

    /**
     * @param predictedIds the ids with a non-empty mask in at least one frame
     * @param matches      per frame: ground-truth object -> predicted id
     * @return the false ones, in increasing order
     */
    public static Set<Integer> of(Set<Integer> predictedIds, List<Map<Integer, Integer>> matches) {
        Set<Integer> matched = new HashSet<>();
        for (Map<Integer, Integer> frame : matches) {
            matched.addAll(frame.values());
        }
        Set<Integer> out = new TreeSet<>(predictedIds);
        out.removeAll(matched);
        return out;
    }
}
