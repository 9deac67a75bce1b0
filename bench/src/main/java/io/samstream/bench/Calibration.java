package io.samstream.bench;

import io.samstream.gpu.sam3.Sam3Model;
import io.samstream.gpu.sam3.VisionFeatures;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import io.samstream.gpu.sam3.video.Concept;
import io.samstream.gpu.sam3.video.Detection;
import io.samstream.gpu.sam3.video.Sam3ConceptDetector;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A threshold and NMS IoU and what they gave on frame 0: {@code detections} after NMS, out of the best
 * probabilities {@code best}; {@code note} says when NMS had to go or ties let more through. {@link #calibrate} is
 * {@link Sam3VideoBench}'s rule (its class comment): the same number of instances for samstream and Meta.
 */
record Calibration(float threshold, float nmsIou, int detections, float[] best, String note) {
    /** Meta's mask NMS IoU ({@code det_nms_thresh}). */
    static final float META_NMS_IOU = 0.1f;

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < Math.min(best.length, 8); i++) {
            b.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT, "%.5f", best[i]));
        }
        return String.format(Locale.ROOT, "threshold %.6f, nms %.2f, %d detections on frame 0 (best %s)%s",
                threshold, nmsIou, detections, b, note.isEmpty() ? "" : "; " + note);
    }

    /**
     * {@link Sam3VideoBench}'s rule on frame 0's features: the threshold just below the k-th best probability for the
     * smallest k >= target whose detections keep {@code target} after Meta's NMS (one more candidate below
     * the others adds at most one survivor, so the count grows with k and a binary search finds k), else NMS off.
     */
    static Calibration calibrate(Sam3Model detector, Sam3Tokenizer tokenizer, VisionFeatures frame0, Concept concept,
            int target) {
        List<Detection> all = new Sam3ConceptDetector(detector, tokenizer, 0f, 0f).detect(frame0, concept, true);
        float[] p = new float[all.size()];
        for (int i = 0; i < p.length; i++) {
            p[i] = -all.get(i).score();
        }
        Arrays.sort(p);
        for (int i = 0; i < p.length; i++) {
            p[i] = -p[i];
        }
        if (p.length < target) {
            throw new IllegalStateException(concept + ": only " + p.length + " queries, " + target + " instances asked");
        }
        int lo = target, hi = p.length;
        if (count(detector, tokenizer, frame0, concept, thresholdAt(p, hi), META_NMS_IOU) >= target) {
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (count(detector, tokenizer, frame0, concept, thresholdAt(p, mid), META_NMS_IOU) >= target) {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            float t = thresholdAt(p, lo);
            return new Calibration(t, META_NMS_IOU, count(detector, tokenizer, frame0, concept, t, META_NMS_IOU), p,
                    "");
        }
        float t = thresholdAt(p, target);
        int n = count(detector, tokenizer, frame0, concept, t, 0f);
        return new Calibration(t, 0f, n, p, "NMS off: no threshold leaves " + target + " detections after NMS at "
                + META_NMS_IOU + (n > target ? "; ties let " + n + " through" : ""));
    }

    /**
     * The best probability below the k-th best of {@code p} (sorted, best first), or 0: exactly k pass {@code >
     * threshold} unless the k-th ties with the next (then all the tied ones), whatever precision the scores have.
     */
    static float thresholdAt(float[] p, int k) {
        for (int j = k; j < p.length; j++) {
            if (p[j] < p[k - 1]) {
                return p[j];
            }
        }
        return 0f;
    }

    private static int count(Sam3Model detector, Sam3Tokenizer tokenizer, VisionFeatures frame0, Concept concept,
            float threshold, float nmsIou) {
        return new Sam3ConceptDetector(detector, tokenizer, threshold, nmsIou).detect(frame0, concept, true).size();
    }
}
