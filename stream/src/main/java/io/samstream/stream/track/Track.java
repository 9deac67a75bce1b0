package io.samstream.stream.track;

import io.samstream.gpu.tensor.Tensor;

/**
 * One followed object: its stable id, where it came from, and what the next frame's prompt is built
 * from (its last good low-res logits and box, and the box filter). Mutable; owned by one tracker,
 * which one thread at a time runs.
 */
public final class Track {
    /** Where an object came from. */
    public enum Origin { PROMPTED, DISCOVERED }

    private final int id;
    private final Origin origin;
    /** The prompt revision it was seeded from (prompted tracks; -1 for discovered ones). */
    private final long revision;
    private final long bornFrame;
    private final KalmanBoxFilter filter;
    private Tensor lowResLogits;
    private double[] box;
    private int badFrames;
    /** The box's size {@code [w, h]} when last seen clear of other objects ({@link PartialBox}). */
    private double[] clearSize;
    private int unexplainedBadFrames;

    /**
     * @param lowResLogits the seed's chosen logits {@code [1, L, L]}
     * @param box          the seed mask's box in pixels {@code [x0, y0, x1, y1]}
     */
    public Track(int id, Origin origin, long revision, long bornFrame, Tensor lowResLogits, double[] box) {
        this.id = id;
        this.origin = origin;
        this.revision = revision;
        this.bornFrame = bornFrame;
        this.lowResLogits = lowResLogits;
        this.box = box.clone();
        this.clearSize = new double[] {box[2] - box[0], box[3] - box[1]};
        this.filter = new KalmanBoxFilter(box);
    }

    public int id() {
        return id;
    }

    public Origin origin() {
        return origin;
    }

    public long revision() {
        return revision;
    }

    public long bornFrame() {
        return bornFrame;
    }

    /** The last good mask's logits {@code [1, L, L]}. */
    public Tensor lowResLogits() {
        return lowResLogits;
    }

    /** The last good mask's box in pixels. */
    public double[] box() {
        return box.clone();
    }

    public KalmanBoxFilter filter() {
        return filter;
    }

    /** The box's size {@code [w, h]} when it was last seen clear of every other object. */
    double[] clearSize() {
        return clearSize.clone();
    }

    /** Bad frames in a row, explained or not. */
    public int badFrames() {
        return badFrames;
    }

    /** A good frame: its mask becomes the next frame's prompt and corrects the filter. */
    void measured(Tensor logits, double[] measuredBox) {
        measured(logits, measuredBox, measuredBox, true);
    }

    /**
     * A good frame whose mask may be partly hidden: {@code fullBox} ({@link PartialBox}) corrects the filter,
     * the visible mask and its box become the next prompt's; {@code clear}: no other object's box touches it.
     */
    void measured(Tensor logits, double[] measuredBox, double[] fullBox, boolean clear) {
        lowResLogits = logits;
        box = measuredBox.clone();
        if (clear) {
            clearSize = new double[] {measuredBox[2] - measuredBox[0], measuredBox[3] - measuredBox[1]};
        }
        filter.update(fullBox);
        badFrames = 0;
        unexplainedBadFrames = 0;
    }

    /** A bad frame that nothing explains: the last good mask stays, the filter coasts on its prediction. */
    int bad() {
        return bad(false);
    }

    /**
     * A bad frame; {@code hidden}: another object in front explains it, so it counts only towards the
     * longer limit for hidden objects ({@link #badFrames}), not towards {@link #unexplainedBadFrames}.
     */
    int bad(boolean hidden) {
        if (!hidden) {
            unexplainedBadFrames++;
        }
        filter.holdSize();
        return ++badFrames;
    }

    /** Bad frames in a row that no occluder explains. */
    public int unexplainedBadFrames() {
        return unexplainedBadFrames;
    }

    /** Its state, for failover ({@link TrackerState}). */
    TrackerState.TrackState export() {
        return new TrackerState.TrackState(id, origin, revision, bornFrame, lowResLogits, box.clone(), clearSize.clone(),
                badFrames, unexplainedBadFrames, filter.exportState());
    }

    /** A track taken up from its exported state. */
    static Track restore(TrackerState.TrackState s) {
        Track t = new Track(s.id(), s.origin(), s.revision(), s.bornFrame(), s.lowResLogits(), s.box());
        t.clearSize = s.clearSize().clone();
        t.badFrames = s.badFrames();
        t.unexplainedBadFrames = s.unexplainedBadFrames();
        t.filter.importState(s.filter());
        return t;
    }

    /** Whether it should be kept over {@code other} when both are one object: prompted, then older, then lower id. */
    boolean outranks(Track other) {
        if (origin != other.origin) {
            return origin == Origin.PROMPTED;
        }
        if (bornFrame != other.bornFrame) {
            return bornFrame < other.bornFrame;
        }
        return id < other.id;
    }
}
