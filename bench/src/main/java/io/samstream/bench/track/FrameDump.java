package io.samstream.bench.track;

import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * A run's records frame by frame against the ground truth, as tab-separated text, for reading what the tracker
 * did (TrackEval {@code --dump DIR}): one row per frame and published id, and one per frame and object the
 * truth shows but no id publishes. Columns: frame; id (-1: none published for that object); area (published
 * pixels); truth_area (visible pixels of object {@code id}, or of the row's object); iou (with object
 * {@code id}'s visible mask; ids are object indices in box mode); matched (the object it is matched to,
 * IoU >= 0.5, or -1); on_objects (share of its pixels on any object); most_on (the object holding most of
 * its pixels, -1: background); lost (the ids the record lists as lost, comma-separated).
 */
public final class FrameDump {
    public static final String HEADER = "frame\tid\tarea\ttruth_area\tiou\tmatched\ton_objects\tmost_on\tlost";

    private FrameDump() {}

    public static String of(ClipTruth truth, TrackHarness.ClipRun run) {
        StringBuilder b = new StringBuilder(HEADER).append('\n');
        for (int t = 0; t < truth.frames(); t++) {
            Map<Integer, boolean[]> frame = run.predictions().get(t);
            byte[] labels = truth.labels(t);
            Map<Integer, Integer> match = FrameMatching.match(labels, truth.objects(), frame);
            String lost = String.join(",", run.lost().get(t).stream().map(String::valueOf).toList());
            TreeSet<Integer> ids = new TreeSet<>(frame.keySet());
            for (int id : ids) {
                boolean[] m = frame.get(id);
                int area = 0;
                int onObjects = 0;
                int[] perObject = new int[truth.objects()];
                for (int p = 0; p < m.length; p++) {
                    if (m[p]) {
                        area++;
                        if (labels[p] >= 0) {
                            onObjects++;
                            perObject[labels[p]]++;
                        }
                    }
                }
                int most = -1;
                int best = 0;
                for (int o = 0; o < perObject.length; o++) {
                    if (perObject[o] > best) {
                        best = perObject[o];
                        most = o;
                    }
                }
                boolean own = id >= 0 && id < truth.objects();
                double iou = own ? RegionJaccard.of(m, truth.mask(id, t)) : Double.NaN;
                int matched = -1;
                for (Map.Entry<Integer, Integer> e : match.entrySet()) {
                    if (e.getValue() == id) {
                        matched = e.getKey();
                    }
                }
                b.append(String.format(Locale.ROOT, "%d\t%d\t%d\t%d\t%.3f\t%d\t%.2f\t%d\t%s%n", t, id, area,
                        own ? truth.visibleArea(id, t) : 0, iou, matched, area == 0 ? 0.0 : (double) onObjects / area,
                        most, lost));
            }
            for (int o = 0; o < truth.objects(); o++) {
                if (truth.visibleArea(o, t) > 0 && !ids.contains(o) && run.promptFrames().containsKey(o)
                        && run.promptFrames().get(o) <= t) {
                    b.append(String.format(Locale.ROOT, "%d\t-1\t0\t%d\tNaN\t-1\t0\t-1\t%s\t# object %d not published%n",
                            t, truth.visibleArea(o, t), lost, o));
                }
            }
        }
        return b.toString();
    }
}
