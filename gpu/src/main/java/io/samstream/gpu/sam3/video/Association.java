package io.samstream.gpu.sam3.video;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Detections matched to tracks on one frame, as Meta's {@code Sam3VideoBase._associate_det_trk} matches them, by
 * the IoU of the binary masks (logits > 0) at the low resolution both have:
 * <ul>
 *   <li>a detection is <b>new</b> when its score is at least {@code newDetThreshold} (0.7) and no track overlaps it
 *       by IoU {@code assocIou} (0.1) or more;</li>
 *   <li>each detection <b>matches</b> every track it overlaps by {@code assocIou} or more (several tracks may match
 *       one detection: duplicates, which hot-start counts);</li>
 *   <li>a track with a non-empty mask is <b>unmatched</b> when no detection overlaps it by {@code trackAssocIou}
 *       (0.5) or more; a track with an empty mask is <b>empty</b>;</li>
 *   <li>a detection scored 0.8 or more that is not new and overlaps its best track by IoU 0.8 or more is that
 *       track's <b>high-confidence</b> detection (used to re-condition it).</li>
 * </ul>
 * Indexes are into the lists given; detections and tracks keep their order.
 *
 * @param newDetections     detection indexes, ascending
 * @param unmatchedTracks   track indexes
 * @param emptyTracks       track indexes
 * @param matches           per detection index, the track indexes it matches (ascending)
 * @param highConfidence    track index to its high-confidence detection index (a later detection wins a track)
 */
record Association(List<Integer> newDetections, List<Integer> unmatchedTracks, List<Integer> emptyTracks,
        Map<Integer, List<Integer>> matches, Map<Integer, Integer> highConfidence) {

    /** {@code HIGH_CONF_THRESH} and {@code HIGH_IOU_THRESH} of Meta's association. */
    static final float HIGH_CONFIDENCE = 0.8f;

    /**
     * @param detections binary masks of the detections
     * @param scores     their scores (probabilities)
     * @param tracks     binary masks of the tracks, the same size
     */
    static Association of(List<PackedMask> detections, float[] scores, List<PackedMask> tracks, float assocIou,
            float trackAssocIou, float newDetThreshold) {
        int nd = detections.size();
        int nt = tracks.size();
        List<Integer> empty = new ArrayList<>();
        boolean[] nonEmpty = new boolean[nt];
        for (int t = 0; t < nt; t++) {
            nonEmpty[t] = tracks.get(t).area() > 0;
            if (!nonEmpty[t]) {
                empty.add(t);
            }
        }
        Map<Integer, List<Integer>> matches = new LinkedHashMap<>();
        Map<Integer, Integer> high = new LinkedHashMap<>();
        if (nt == 0) {
            List<Integer> all = new ArrayList<>();
            for (int d = 0; d < nd; d++) {
                all.add(d);
            }
            return new Association(all, List.of(), List.of(), matches, high);
        }
        List<Integer> unmatched = new ArrayList<>();
        if (nd == 0) {
            for (int t = 0; t < nt; t++) {
                if (nonEmpty[t]) {
                    unmatched.add(t);
                }
            }
            return new Association(List.of(), unmatched, empty, matches, high);
        }
        float[][] iou = new float[nd][nt];
        for (int d = 0; d < nd; d++) {
            for (int t = 0; t < nt; t++) {
                iou[d][t] = detections.get(d).iou(tracks.get(t));
            }
        }
        for (int t = 0; t < nt; t++) {
            boolean matched = false;
            for (int d = 0; d < nd; d++) {
                matched |= iou[d][t] >= trackAssocIou;
            }
            if (nonEmpty[t] && !matched) {
                unmatched.add(t);
            }
        }
        List<Integer> fresh = new ArrayList<>();
        for (int d = 0; d < nd; d++) {
            List<Integer> m = new ArrayList<>();
            int best = 0;
            for (int t = 0; t < nt; t++) {
                if (iou[d][t] >= assocIou) {
                    m.add(t);
                }
                if (iou[d][t] > iou[d][best]) {
                    best = t;
                }
            }
            boolean isNew = scores[d] >= newDetThreshold && m.isEmpty();
            if (isNew) {
                fresh.add(d);
            }
            matches.put(d, m);
            if (scores[d] >= HIGH_CONFIDENCE && !isNew && iou[d][best] >= HIGH_CONFIDENCE) {
                high.put(best, d);
            }
        }
        return new Association(fresh, unmatched, empty, matches, high);
    }
}
