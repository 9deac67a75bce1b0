package io.samstream.stream.track.kalman;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Occlusion among a frame's jobs: masks that slid onto another object ({@link #jumped}) or crept into it
 * ({@link #inside}), and bad frames that another object in front explains ({@link #hidden}). Stateless rules on one
 * frame's jobs (their masks, boxes and previous masks).
 */
final class Occlusion {
    /**
     * A followed mask more than this fraction of which is another object's mask, and whose IoU with its own previous
     * mask is below it, slid onto that object ({@link #jumped}); the share that makes a mask lie "mostly" in another.
     */
    static final double JUMP_COVER = 0.5;
    /** {@link #inside}: a mask this much larger than its object's last clear area may have crept onto another. */
    static final double INSIDE_GROWTH = 1.4;

    private Occlusion() {}

    /**
     * Followed tracks whose new mask is mostly another followed object's new mask while it agrees less with its
     * own previous mask than that object's does: the prompt slid onto a neighbour (typically the occluder).
     */
    static Set<Work> jumped(List<Work> work) {
        Set<Work> out = new HashSet<>();
        for (Work a : work) {
            if (a.previous == null || a.read.empty()) {
                continue;
            }
            double own = LowResMask.iou(a.mask, a.previous);
            if (own >= JUMP_COVER) {
                continue; // it still continues its own mask: not a jump (the merge rule decides)
            }
            for (Work b : work) {
                if (b == a || b.previous == null || b.read.empty()) {
                    continue;
                }
                if (LowResMask.coveredBy(a.mask, b.mask) > JUMP_COVER && own < LowResMask.iou(b.mask, b.previous)) {
                    out.add(a);
                    break;
                }
            }
        }
        return out;
    }

    /**
     * Followed masks that crept onto another object: they lie mostly ({@value #JUMP_COVER}) inside its new mask (it
     * not mostly in them) and grew past {@value #INSIDE_GROWTH} x the area they had when last clear of others, a
     * little each frame (so the jump rule, which wants a break with the previous mask, does not see it); typically
     * an object going behind its occluder. A bad frame, explained by the other object. (Blaming the outer mask
     * instead when it is the one that grew, as look-alikes in contact give SAM one mask for both, cost more than it
     * gave on the same-colour clips: bench/results/track-eval-hard-3.md.)
     */
    static Set<Work> inside(List<Work> work, Set<Work> gone, Set<Work> jumped) {
        Set<Work> out = new HashSet<>();
        for (Work w : work) {
            if (w.previous == null || gone.contains(w) || jumped.contains(w) || w.read.empty()
                    || w.track.clearArea() == 0 || w.read.summary().area() <= INSIDE_GROWTH * w.track.clearArea()) {
                continue;
            }
            for (Work o : work) {
                if (o != w && !gone.contains(o) && !jumped.contains(o) && !o.read.empty()
                        && LowResMask.coveredBy(w.mask, o.mask) > JUMP_COVER
                        && LowResMask.coveredBy(o.mask, w.mask) <= JUMP_COVER) {
                    out.add(w);
                    break;
                }
            }
        }
        return out;
    }

    /** Whether a followed track's bad frame is explained: its predicted box overlaps another object's mask box. */
    static boolean hidden(Work w, List<Work> work, Set<Work> jumped) {
        return w.predicted != null && inFront(w.predicted, w, work, jumped);
    }

    /** Whether {@code box} (pixels) overlaps the mask box of another object of this frame than {@code w}. */
    static boolean inFront(double[] box, Work w, List<Work> work, Set<Work> jumped) {
        for (Work o : work) {
            if (o != w && !o.read.empty() && !jumped.contains(o) && overlap(box, o.read.box())) {
                return true;
            }
        }
        return false;
    }

    static boolean overlap(double[] a, double[] b) {
        return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
    }

    /** Whether {@code box} (pixels) overlaps the mask box of a live object of the frame ({@link #inFront}'s rule, against the kept jobs). */
    static boolean besideAny(double[] box, List<Work> kept) {
        for (Work k : kept) {
            if (!k.read.empty() && !k.jumped && overlap(box, k.read.box())) {
                return true;
            }
        }
        return false;
    }
}
