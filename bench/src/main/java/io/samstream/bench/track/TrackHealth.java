package io.samstream.bench.track;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the harder families measure beyond J and F, from a box-mode run's records: false-track frames as a
 * share of all track-frames ({@link FalseTracks#frames}), entries published with area 0 (an object listed with
 * an empty mask and box [0,0,0,0] instead of being left out or reported lost), and how late objects that are
 * gone are reported {@code lost} ({@link LostDelay} over the clip's {@link Exits}). Ids are the ground truth's
 * object indices (box mode), so this is not for discovery runs.
 *
 * @param falseFrames     track-frames and the false ones
 * @param zeroAreaEntries object entries with area 0, over all records
 * @param zeroAreaRecords records with at least one such entry
 * @param lost            the exits and when each was reported lost
 */
public record TrackHealth(FalseTracks.Frames falseFrames, int zeroAreaEntries, int zeroAreaRecords,
        LostDelay.Result lost) {

    public static TrackHealth of(ClipTruth truth, TrackHarness.ClipRun run) {
        List<Map<Integer, Integer>> matches = new ArrayList<>();
        for (int t = 0; t < truth.frames(); t++) {
            matches.add(FrameMatching.match(truth.labels(t), truth.objects(), run.predictions().get(t)));
        }
        int entries = 0;
        int records = 0;
        for (Set<Integer> z : run.zeroArea()) {
            entries += z.size();
            records += z.isEmpty() ? 0 : 1;
        }
        return new TrackHealth(FalseTracks.frames(run.predictions(), matches), entries, records,
                LostDelay.of(Exits.of(truth), run.allPromptFrames(), run.lost()));
    }

    /** Several clips' figures as one (sums; the lost delays of every exit). */
    public static TrackHealth merge(List<TrackHealth> all) {
        int track = 0;
        int bad = 0;
        Map<Integer, Integer> byId = new java.util.TreeMap<>();
        int entries = 0;
        int records = 0;
        List<LostDelay.Result> lost = new ArrayList<>();
        for (TrackHealth h : all) {
            track += h.falseFrames().trackFrames();
            bad += h.falseFrames().falseFrames();
            entries += h.zeroAreaEntries();
            records += h.zeroAreaRecords();
            lost.add(h.lost());
        }
        return new TrackHealth(new FalseTracks.Frames(track, bad, byId), entries, records, LostDelay.Result.merge(lost));
    }
}
