package io.samstream.bench.track;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Every figure of one clip from its ground truth and the engine's masks.
 *
 * <ul>
 *   <li>J and F per prompted object: the mean over the frames from the one it was prompted on (included:
 *       a box is not a mask, so that frame is measured too) to the clip's end, including frames where it
 *       is hidden or outside the frame (where the right answer is an empty mask: both empty counts 1). A
 *       frame without a mask for the object counts as an empty prediction. The clip's J (F) is the mean of
 *       its objects' J (F), as in DAVIS; J&F is the mean of the two.</li>
 *   <li>Id switches, false tracks and discovery recall from the per-frame matching ({@link FrameMatching}),
 *       over all frames and every predicted id.</li>
 * </ul>
 */
public final class ClipScore {
    private ClipScore() {}

    /** One prompted object's means over its frames. */
    public record ObjectScore(int object, int fromFrame, double j, double f) {}

    /**
     * @param objects     the prompted objects' scores (none in discovery mode)
     * @param idSwitches  {@link IdSwitches}
     * @param recall      {@link DiscoveryRecall}
     * @param falseTracks {@link FalseTracks}
     * @param predicted   how many ids had a non-empty mask in some frame
     */
    public record Result(String clip, List<ObjectScore> objects, int idSwitches, DiscoveryRecall.Result recall,
            Set<Integer> falseTracks, int predicted) {
        public double j() {
            return objects.stream().mapToDouble(ObjectScore::j).average().orElse(Double.NaN);
        }

        public double f() {
            return objects.stream().mapToDouble(ObjectScore::f).average().orElse(Double.NaN);
        }

        public double jf() {
            return (j() + f()) / 2;
        }
    }

    /**
     * @param predictions  per frame (index = frame): predicted masks by id, row-major
     * @param promptFrames the objects whose J and F count: object -> the frame it was prompted on
     */
    public static Result score(String clip, ClipTruth truth, List<Map<Integer, boolean[]>> predictions,
            Map<Integer, Integer> promptFrames) {
        if (predictions.size() != truth.frames()) {
            throw new IllegalArgumentException("clip " + clip + ": masks for " + predictions.size() + " frames, the clip has "
                    + truth.frames());
        }
        int pixels = truth.width() * truth.height();
        BoundaryF boundary = new BoundaryF(truth.width(), truth.height());
        List<ObjectScore> objects = new ArrayList<>();
        for (Map.Entry<Integer, Integer> e : promptFrames.entrySet()) {
            int o = e.getKey();
            double j = 0;
            double f = 0;
            int n = 0;
            for (int t = e.getValue(); t < truth.frames(); t++) {
                boolean[] p = predictions.get(t).getOrDefault(o, new boolean[pixels]);
                boolean[] g = truth.mask(o, t);
                j += RegionJaccard.of(p, g);
                f += boundary.of(p, g);
                n++;
            }
            objects.add(new ObjectScore(o, e.getValue(), j / n, f / n));
        }
        List<Map<Integer, Integer>> matches = new ArrayList<>();
        Set<Integer> predictedIds = new HashSet<>();
        for (int t = 0; t < truth.frames(); t++) {
            Map<Integer, boolean[]> frame = predictions.get(t);
            matches.add(FrameMatching.match(truth.labels(t), truth.objects(), frame));
            for (Map.Entry<Integer, boolean[]> e : frame.entrySet()) {
                for (boolean v : e.getValue()) {
                    if (v) {
                        predictedIds.add(e.getKey());
                        break;
                    }
                }
            }
        }
        return new Result(clip, objects, IdSwitches.count(matches), DiscoveryRecall.of(truth, matches),
                FalseTracks.of(predictedIds, matches), predictedIds.size());
    }
}
