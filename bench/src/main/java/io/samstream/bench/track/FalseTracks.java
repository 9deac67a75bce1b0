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

    /**
     * Track-frames: one per frame and published id with a non-empty mask. False: the id is matched
     * ({@link FrameMatching}, IoU >= 0.5, one-to-one) to no ground-truth object in that frame: it covers no
     * object (a piece of background, a blob that grew over an object and its surroundings, a duplicate
     * that lost its object to its twin, a track still published after its object left or was cut away).
     * Entries with an empty mask are not track-frames (see {@link TrackHealth}'s zero-area count).
     */
    public record Frames(int trackFrames, int falseFrames, Map<Integer, Integer> falseFramesById) {
        public double share() {
            return trackFrames == 0 ? 0 : (double) falseFrames / trackFrames;
        }
    }

    /**
     * @param predictions per frame: published masks by id
     * @param matches     per frame: ground-truth object -> predicted id
     */
    public static Frames frames(List<Map<Integer, boolean[]>> predictions, List<Map<Integer, Integer>> matches) {
        if (predictions.size() != matches.size()) {
            throw new IllegalArgumentException("masks of " + predictions.size() + " frames, matches of " + matches.size());
        }
        int all = 0;
        int bad = 0;
        Map<Integer, Integer> byId = new java.util.TreeMap<>();
        for (int t = 0; t < predictions.size(); t++) {
            java.util.Collection<Integer> matched = matches.get(t).values();
            for (Map.Entry<Integer, boolean[]> e : predictions.get(t).entrySet()) {
                boolean any = false;
                for (boolean v : e.getValue()) {
                    if (v) {
                        any = true;
                        break;
                    }
                }
                if (!any) {
                    continue;
                }
                all++;
                if (!matched.contains(e.getKey())) {
                    bad++;
                    byId.merge(e.getKey(), 1, Integer::sum);
                }
            }
        }
        return new Frames(all, bad, byId);
    }
}
