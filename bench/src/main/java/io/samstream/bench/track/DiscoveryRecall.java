package io.samstream.bench.track;

import java.util.List;
import java.util.Map;

/**
 * What automatic discovery found: among the ground-truth objects that are fully visible (in the frame,
 * uncovered) for at least {@value #MIN_RUN} consecutive frames, those that some predicted object matches
 * ({@link FrameMatching}, IoU >= 0.5) in at least one frame of such a run.
 */
public final class DiscoveryRecall {
    /** The run of fully visible frames that makes an object one discovery should find. */
    public static final int MIN_RUN = 10;

    private DiscoveryRecall() {}

    /** @param eligible objects fully visible for {@value #MIN_RUN}+ frames; found: those of them matched */
    public record Result(int eligible, int found) {
        public double recall() {
            return eligible == 0 ? Double.NaN : (double) found / eligible;
        }
    }

    public static Result of(ClipTruth truth, List<Map<Integer, Integer>> matches) {
        boolean[][] visible = new boolean[truth.objects()][truth.frames()];
        for (int o = 0; o < truth.objects(); o++) {
            for (int t = 0; t < truth.frames(); t++) {
                visible[o][t] = truth.fullyVisible(o, t);
            }
        }
        return of(visible, matches);
    }

    /**
     * @param fullyVisible per object and frame
     * @param matches      per frame: ground-truth object -> predicted id
     */
    public static Result of(boolean[][] fullyVisible, List<Map<Integer, Integer>> matches) {
        int eligible = 0;
        int found = 0;
        for (int o = 0; o < fullyVisible.length; o++) {
            boolean[] v = fullyVisible[o];
            if (v.length != matches.size()) {
                throw new IllegalArgumentException("object " + o + ": visibility of " + v.length + " frames, matches of "
                        + matches.size());
            }
            boolean isEligible = false;
            boolean isFound = false;
            int start = 0;
            while (start < v.length) {
                if (!v[start]) {
                    start++;
                    continue;
                }
                int end = start;
                while (end < v.length && v[end]) {
                    end++;
                }
                if (end - start >= MIN_RUN) {
                    isEligible = true;
                    for (int t = start; t < end; t++) {
                        isFound |= matches.get(t).containsKey(o);
                    }
                }
                start = end;
            }
            if (isEligible) {
                eligible++;
                if (isFound) {
                    found++;
                }
            }
        }
        return new Result(eligible, found);
    }
}
