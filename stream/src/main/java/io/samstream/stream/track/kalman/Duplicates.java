package io.samstream.stream.track.kalman;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Two tracks on one mask (IoU at least {@code merge-iou}). When one of them is new ({@link #isNew}) it is a duplicate
 * of the other object and is merged into it: its track ends, reported lost (of two new ones the lower-ranked, {@link
 * Track#outranks}). Two established tracks are two objects in contact or crossing and are never merged: the one
 * whose mask agrees less with its own previous mask takes a bad frame, the other keeps the mask.
 */
final class Duplicates {
    private static final Logger log = LoggerFactory.getLogger(Duplicates.class);
    /** A track is new for this many frames from the one it was made in (seeded, or discovered the frame before). */
    static final int NEW_TRACK_FRAMES = 2;

    private final String stream;
    private final double mergeIou;

    Duplicates(String stream, double mergeIou) {
        this.stream = stream;
        this.mergeIou = mergeIou;
    }

    /** Whether a track is new: seeded this frame, or followed for the first time (discovered the frame before). */
    static boolean isNew(Track t, long frame) {
        return frame - t.bornFrame() < NEW_TRACK_FRAMES;
    }

    /**
     * Settles the frame's pairs on one mask, pair by pair in job order: a duplicate joins {@code gone}, an
     * established track that loses its mask joins {@code jumped} (coasting, hidden).
     *
     * @return the duplicates merged away, in order: their tracks are the caller's to end and report lost
     */
    List<Work> resolve(long frame, List<Work> work, Set<Work> gone, Set<Work> jumped) {
        List<Work> merged = new ArrayList<>();
        for (int i = 0; i < work.size(); i++) {
            for (int j = i + 1; j < work.size(); j++) {
                Work a = work.get(i);
                Work b = work.get(j);
                if (gone.contains(a) || gone.contains(b) || a.read.empty() || b.read.empty() || jumped.contains(a)
                        || jumped.contains(b) || LowResMask.iou(a.mask, b.mask) < mergeIou) {
                    continue;
                }
                boolean aNew = isNew(a.track, frame);
                boolean bNew = isNew(b.track, frame);
                if (aNew || bNew) {
                    Work loser = aNew && bNew ? (a.track.outranks(b.track) ? b : a) : aNew ? a : b;
                    Work winner = loser == a ? b : a;
                    gone.add(loser);
                    merged.add(loser);
                    log.info("stream {}: new object {} is object {} (mask IoU >= {}) at frame {}: merged into it "
                            + "(reported lost)", stream, loser.id, winner.id, mergeIou, frame);
                } else {
                    double ownA = a.previous == null ? 0 : LowResMask.iou(a.mask, a.previous);
                    double ownB = b.previous == null ? 0 : LowResMask.iou(b.mask, b.previous);
                    Work loser = ownA != ownB ? (ownA < ownB ? a : b) : a.track.outranks(b.track) ? b : a;
                    jumped.add(loser);
                    log.debug("stream {}: objects {} and {} share one mask (IoU >= {}) at frame {}: object {} agrees "
                            + "less with its previous mask and takes a bad frame", stream, a.id, b.id, mergeIou, frame,
                            loser.id);
                }
            }
        }
        return merged;
    }
}
