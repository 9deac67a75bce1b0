package io.samstream.stream.track.concept;

import io.samstream.config.PromptSpec;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.sam3.video.TrackedObject;
import io.samstream.gpu.sam3.video.VideoStep;
import io.samstream.stream.track.MaskReadout;
import io.samstream.stream.track.TrackedFrame;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One stream's SAM 3 steps as the records need them. Ids: the tracker's, from {@link PromptSpec#DISCOVERED_ID_BASE}
 * up, as objects found rather than prompted. Objects: each shown mask with its concept, its score the tracker's
 * (the probability that the object is on the frame; its detection score on its first frame), stability 1 (the mask
 * is already binary); an empty mask counts as hidden. Ends: {@code lost} lists each id once when it is lost, and an
 * id whose tracking ends without having been reported lost (the hot-start rule removed it, its concept was removed,
 * the stream was reset) is listed in {@code lost} then, so a consumer sees every object end.
 */
final class ConceptFrames {
    /** Logits of a binary mask: far from 0 either way, so the stability score is 1. */
    private static final float ON = 8f;

    /** Ids reported lost whose tracking has not ended (they may come back): bounded by the tracked objects. */
    private final Set<Integer> reportedLost = new HashSet<>();
    /** The highest tracker id seen: the tracker numbers objects in the order it finds them. */
    private long highest = -1;
    /** Objects the last step found (ids not seen before). */
    private int found;

    /** The record id of a tracker's object id. */
    static int recordId(long id) {
        long r = PromptSpec.DISCOVERED_ID_BASE + id;
        if (r > Integer.MAX_VALUE) {
            throw new IllegalStateException("the stream has used up its object ids (" + id + " objects)");
        }
        return (int) r;
    }

    TrackedFrame of(VideoStep step) {
        List<MaskReadout.Readout> masks = new ArrayList<>(step.objects().size());
        List<Integer> hidden = new ArrayList<>();
        found = 0;
        for (TrackedObject o : step.objects()) {
            if (o.id() > highest) {
                highest = o.id();
                found++;
            }
            int id = recordId(o.id());
            MaskSummary m = MaskSummary.of(logits(o.mask()), o.height(), o.width());
            if (m.area() == 0) {
                hidden.add(id);
                continue;
            }
            reportedLost.remove(id);
            masks.add(new MaskReadout.Readout(id, finite(o.trackerScore()), m, o.concept().phrase()));
        }
        for (long h : step.hidden()) {
            hidden.add(recordId(h));
        }
        List<Integer> lost = new ArrayList<>();
        for (long l : step.lost()) {
            int id = recordId(l);
            if (reportedLost.add(id)) {
                lost.add(id);
            }
        }
        for (long d : step.dropped()) {
            int id = recordId(d);
            if (!reportedLost.remove(id) && !lost.contains(id)) {
                lost.add(id);
            }
            hidden.remove((Integer) id);
        }
        hidden.removeAll(lost);
        return new TrackedFrame(masks, hidden, lost);
    }

    /** How many objects the last {@link #of} step found: new ids, whether shown or hidden on that frame. */
    int found() {
        return found;
    }

    private static float[] logits(boolean[] mask) {
        float[] l = new float[mask.length];
        for (int i = 0; i < mask.length; i++) {
            l[i] = mask[i] ? ON : -ON;
        }
        return l;
    }

    private static float finite(float v) {
        return Float.isFinite(v) ? v : 0f;
    }
}
