package io.samstream.bench.track;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the harder families measure beyond J and F, from a box-mode run's records: false-track frames as a
 * share of all track-frames ({@link FalseTracks#frames}), entries published with area 0 (an object listed with
 * an empty mask and box [0,0,0,0] instead of being left out or reported lost), and how late objects that are
 * gone are reported {@code lost} ({@link LostDelay} over the clip's {@link Exits}), and tracks that end without
 * any {@code lost} ({@link SilentEnd}: an object taken over by a neighbour's track and merged into it). Ids are the ground truth's
 * object indices (box mode), so this is not for discovery runs.
 *
 * @param falseFrames     track-frames and the false ones
 * @param zeroAreaEntries object entries with area 0, over all records
 * @param zeroAreaRecords records with at least one such entry
 * @param lost            the exits and when each was reported lost
 * @param silentEnds      tracks that ended without a {@code lost} ({@link #silentEnds})
 */
public record TrackHealth(FalseTracks.Frames falseFrames, int zeroAreaEntries, int zeroAreaRecords,
        LostDelay.Result lost, List<SilentEnd> silentEnds) {

    /**
     * A prompted object's track that stopped being published before the clip's end (or before the object's
     * next prompt), or was never published after its prompt, with no record listing it as {@code lost}: merged into another track (the engine merges
     * two tracks whose masks overlap with IoU >= merge-iou, without reporting), or dropped.
     *
     * @param frame   the first frame it is no longer published
     * @param visible whether the object itself is still visible then (it was taken over, not gone)
     */
    public record SilentEnd(int object, int frame, boolean visible) {}

    /**
     * Every silent end: per object and prompt segment (from a prompt to the next, or to the clip's end), the
     * track ends silently when its last entry comes before the segment's last frame and no record of the
     * segment lists it as lost.
     *
     * @param published per frame: the ids with an entry in that frame's record (empty masks included)
     */
    public static List<SilentEnd> silentEnds(ClipTruth truth, Map<Integer, List<Integer>> prompts,
            List<Set<Integer>> published, List<List<Integer>> lost) {
        List<SilentEnd> out = new ArrayList<>();
        int frames = published.size();
        for (Map.Entry<Integer, List<Integer>> e : new java.util.TreeMap<>(prompts).entrySet()) {
            int o = e.getKey();
            List<Integer> p = e.getValue();
            for (int i = 0; i < p.size(); i++) {
                int from = p.get(i);
                int to = i + 1 < p.size() ? p.get(i + 1) : frames;
                int last = -1;
                boolean reported = false;
                for (int t = from; t < to; t++) {
                    if (published.get(t).contains(o)) {
                        last = t;
                    }
                    reported |= lost.get(t).contains(o);
                }
                // Never published at all (a prompt whose track was merged away on its first frame) ends at its
                // prompt frame.
                int end = last >= from ? last + 1 : from;
                if (!reported && end < to && (last < 0 || last < to - 1)) {
                    out.add(new SilentEnd(o, end, truth.visibleArea(o, end) > 0));
                }
            }
        }
        return out;
    }

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
        List<Set<Integer>> published = run.predictions().stream().map(m -> Set.copyOf(m.keySet())).toList();
        return new TrackHealth(FalseTracks.frames(run.predictions(), matches), entries, records,
                LostDelay.of(Exits.of(truth), run.allPromptFrames(), run.lost()),
                silentEnds(truth, run.allPromptFrames(), published, run.lost()));
    }

    /** Several clips' figures as one (sums; the lost delays of every exit). */
    public static TrackHealth merge(List<TrackHealth> all) {
        int track = 0;
        int bad = 0;
        Map<Integer, Integer> byId = new java.util.TreeMap<>();
        int entries = 0;
        int records = 0;
        List<LostDelay.Result> lost = new ArrayList<>();
        List<SilentEnd> silent = new ArrayList<>();
        for (TrackHealth h : all) {
            track += h.falseFrames().trackFrames();
            bad += h.falseFrames().falseFrames();
            entries += h.zeroAreaEntries();
            records += h.zeroAreaRecords();
            lost.add(h.lost());
            silent.addAll(h.silentEnds());
        }
        return new TrackHealth(new FalseTracks.Frames(track, bad, byId), entries, records, LostDelay.Result.merge(lost),
                silent);
    }
}
