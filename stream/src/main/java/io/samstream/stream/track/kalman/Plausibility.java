package io.samstream.stream.track.kalman;

import io.samstream.stream.track.FrameGeometry;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Whether a followed mask is its object at all, whatever its scores say: it must look like the track's appearance
 * memory ({@code min-appearance}), and, clear of other objects, overlap the filter's predicted box and keep its area
 * within {@value #MAX_GROWTH} x of the last frame's (shrinking further is allowed at the frame's edge, where an
 * object leaves). A mask that fails is a bad frame nothing explains.
 */
final class Plausibility {
    /** A clear mask whose area changed by more than this factor in one frame (either way) is not the object. */
    static final double MAX_GROWTH = 2.5;

    private final double minAppearance;

    Plausibility(double minAppearance) {
        this.minAppearance = minAppearance;
    }

    /**
     * The followed jobs (not gone or jumped, with a mask) whose mask is not their object, in job order, each with why.
     *
     * @param imageMean the frame's mean embedding, what appearances are compared against
     */
    Map<Work, String> unlike(List<Work> work, Set<Work> gone, Set<Work> jumped, float[] imageMean,
            FrameGeometry geometry) {
        Map<Work, String> out = new LinkedHashMap<>();
        for (Work w : work) {
            if (w.previous == null || gone.contains(w) || jumped.contains(w) || w.read.empty()) {
                continue;
            }
            double similarity = w.track.looksLike(w.look, imageMean);
            String why = null;
            if (similarity < minAppearance) {
                why = "appearance " + String.format(Locale.ROOT, "%.2f", similarity);
            } else if (!Occlusion.inFront(w.read.box(), w, work, jumped)) {
                double grown = w.track.area() > 0 ? (double) w.read.summary().area() / w.track.area() : 1;
                if (w.predicted != null && !Occlusion.overlap(w.read.box(), w.predicted)) {
                    why = "left its predicted box";
                } else if (grown > MAX_GROWTH || grown < 1 / MAX_GROWTH && !geometry.touchesEdge(w.read.box())) {
                    why = String.format(Locale.ROOT, "area x%.2f in one frame", grown);
                }
            }
            if (why != null) {
                out.put(w, why);
            }
        }
        return out;
    }
}
