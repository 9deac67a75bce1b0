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

    public int badFrames() {
        return badFrames;
    }

    /** A good frame: its mask becomes the next frame's prompt and corrects the filter. */
    void measured(Tensor logits, double[] measuredBox) {
        lowResLogits = logits;
        box = measuredBox.clone();
        filter.update(measuredBox);
        badFrames = 0;
    }

    /** A bad frame: the last good mask stays, the filter coasts on its prediction. */
    int bad() {
        return ++badFrames;
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
