package io.samstream.bench.track;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Identity switches of a clip: for each ground-truth object, how often the predicted id it is matched to
 * ({@link FrameMatching}) changes from one frame where it is matched to the next frame where it is
 * matched. Frames where it is unmatched (hidden, missed) are skipped, so losing an object and finding it
 * again under the same id is no switch; finding it under a new id is one.
 */
public final class IdSwitches {
    private IdSwitches() {}

    /** @param matches per frame, in frame order: ground-truth object -> predicted id */
    public static int count(List<Map<Integer, Integer>> matches) {
        Map<Integer, Integer> last = new HashMap<>();
        int switches = 0;
        for (Map<Integer, Integer> frame : matches) {
            for (Map.Entry<Integer, Integer> e : frame.entrySet()) {
                Integer before = last.put(e.getKey(), e.getValue());
                if (before != null && !before.equals(e.getValue())) {
                    switches++;
                }
            }
        }
        return switches;
    }
}
