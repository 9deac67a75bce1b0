package io.samstream.gpu.sam3.video;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Meta's suppression of overlapping tracks by recent occlusion ({@code
 * _suppress_overlapping_based_on_recent_occlusion}, threshold 0.7): of two tracked masks overlapping by IoU at least
 * the threshold, the one occluded (empty or suppressed) more recently is suppressed on this frame (its logits set to
 * -10 for the memory and the output), provided the other has been occluded at some time too. Each object remembers
 * the last frame it was occluded or suppressed; an object removed this frame counts as always occluded unless it has
 * a frame on record. Threshold 0 turns it off.
 */
final class OcclusionSuppression {
    static final int NEVER = -1;
    static final int ALWAYS = 100000;
    static final float SUPPRESSED_LOGIT = -10f;

    private final float threshold;
    private final Map<Long, Integer> lastOccluded = new HashMap<>();

    OcclusionSuppression(float threshold) {
        this.threshold = threshold;
    }

    /**
     * The tracks' masks (logits, low resolution, in track order) on {@code frame}, suppressed in place; {@code
     * removed}: the objects hot-start removes on this frame.
     */
    void apply(int frame, List<Long> ids, float[][] masks, java.util.Set<Long> removed) {
        if (!(threshold > 0) || ids.isEmpty()) {
            return;
        }
        int n = ids.size();
        PackedMask[] bin = new PackedMask[n];
        int[] last = new int[n];
        for (int i = 0; i < n; i++) {
            bin[i] = PackedMask.of(masks[i]);
            Integer known = lastOccluded.get(ids.get(i));
            last[i] = known != null ? known : removed.contains(ids.get(i)) ? ALWAYS : NEVER;
        }
        boolean[] suppress = new boolean[n];
        if (n > 1) {
            for (int i = 0; i < n; i++) {
                for (int j = i + 1; j < n; j++) {
                    if (!(bin[i].iou(bin[j]) >= threshold)) {
                        continue;
                    }
                    if (last[i] > last[j] && last[j] > NEVER) {
                        suppress[i] = true;
                    }
                    if (last[j] > last[i] && last[i] > NEVER) {
                        suppress[j] = true;
                    }
                }
            }
        }
        Map<Long, Integer> next = new HashMap<>();
        for (int i = 0; i < n; i++) {
            boolean occluded = bin[i].area() == 0;
            next.put(ids.get(i), occluded || suppress[i] ? frame : last[i]);
            if (suppress[i]) {
                java.util.Arrays.fill(masks[i], SUPPRESSED_LOGIT);
            }
        }
        lastOccluded.clear();
        lastOccluded.putAll(next);
    }

    void forget(long id) {
        lastOccluded.remove(id);
    }

    int size() {
        return lastOccluded.size();
    }
}
