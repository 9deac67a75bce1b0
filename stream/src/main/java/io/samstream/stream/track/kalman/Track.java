package io.samstream.stream.track.kalman;

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
    private KalmanBoxFilter filter;
    private Tensor lowResLogits;
    private double[] box;
    private int badFrames;
    /** The box's size {@code [w, h]} when last seen clear of other objects ({@link PartialBox}). */
    private double[] clearSize;
    private int unexplainedBadFrames;
    /** Bad frames of the current run while its predicted box lay under other objects ({@link #coveredBadFrames}). */
    private int coveredBadFrames;
    /** Appearance memory: the mean embedding under the seed frame's mask, and a running mean of clear frames. */
    private float[] seedLook;
    private float[] look;
    /** The last good mask's area in pixels (0 before the first), and the last one clear of other objects. */
    private long area;
    private long clearArea;

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
        coveredBadFrames = 0;
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
        return bad(hidden, false);
    }

    /**
     * A bad frame; {@code covered}: hidden with its whole predicted box under other objects (nothing of it can
     * show), which counts towards {@link #coveredBadFrames} as well.
     */
    int bad(boolean hidden, boolean covered) {
        if (!hidden) {
            unexplainedBadFrames++;
        } else if (covered) {
            coveredBadFrames++;
        }
        filter.holdSize();
        return ++badFrames;
    }

    /** Bad frames in a row that no occluder explains. */
    public int unexplainedBadFrames() {
        return unexplainedBadFrames;
    }

    /** Bad frames of the current run (since its last good frame) spent wholly covered by other objects. */
    public int coveredBadFrames() {
        return coveredBadFrames;
    }

    /**
     * A good frame's appearance (its mask's mean embedding) and area: the first becomes the seed's memory; later
     * ones seen clear of other objects move the running memory a step ({@value #LOOK_RATE}) towards them, so that
     * it follows slow changes of pose and light while one odd frame barely moves it.
     */
    void remember(float[] frameLook, long maskArea, boolean clear) {
        area = maskArea;
        if (clear || clearArea == 0) {
            clearArea = maskArea;
        }
        if (frameLook == null) {
            return;
        }
        if (seedLook == null) {
            seedLook = frameLook.clone();
            look = frameLook.clone();
        } else if (clear) {
            for (int i = 0; i < look.length; i++) {
                look[i] = (float) ((1 - LOOK_RATE) * look[i] + LOOK_RATE * frameLook[i]);
            }
        }
    }

    private static final double LOOK_RATE = 0.2;

    /**
     * How much a mask's mean embedding looks like this object against the image's mean
     * ({@link io.samstream.gpu.model.EmbeddingPool#similarity}): the better of the seed's and the running memory;
     * 1 while it has no memory yet or when there is nothing to compare.
     */
    double looksLike(float[] frameLook, float[] imageMean) {
        if (seedLook == null || frameLook == null || imageMean == null) {
            return 1;
        }
        return Math.max(io.samstream.gpu.model.EmbeddingPool.similarity(frameLook, seedLook, imageMean),
                io.samstream.gpu.model.EmbeddingPool.similarity(frameLook, look, imageMean));
    }

    /** The last good mask's area in pixels (0 before the first). */
    long area() {
        return area;
    }

    /** The area of its last good mask clear of other objects (0 before the first). */
    long clearArea() {
        return clearArea;
    }

    /** The seed's look (the mean embedding under its first good mask); null before it. */
    float[] seedLook() {
        return seedLook;
    }

    /** The running look of its clear frames; null before the first good mask. */
    float[] runningLook() {
        return look;
    }

    /** Whether it has an appearance memory (a good frame with a mask was pooled). */
    boolean remembers() {
        return seedLook != null;
    }

    /** Found again after it was lost: the found mask is its prompt and its box starts the filter afresh. */
    void reidentified(Tensor logits, double[] foundBox) {
        lowResLogits = logits;
        box = foundBox.clone();
        clearSize = new double[] {foundBox[2] - foundBox[0], foundBox[3] - foundBox[1]};
        filter = new KalmanBoxFilter(foundBox);
        badFrames = 0;
        unexplainedBadFrames = 0;
        coveredBadFrames = 0;
    }

    /** Its state, for failover ({@link TrackerState}). */
    TrackerState.TrackState export() {
        return new TrackerState.TrackState(id, origin, revision, bornFrame, lowResLogits, box.clone(), clearSize.clone(),
                badFrames, unexplainedBadFrames, coveredBadFrames, filter.exportState(), seedLook == null ? null : seedLook.clone(),
                look == null ? null : look.clone(), area, clearArea);
    }

    /** A track taken up from its exported state. */
    static Track restore(TrackerState.TrackState s) {
        Track t = new Track(s.id(), s.origin(), s.revision(), s.bornFrame(), s.lowResLogits(), s.box());
        t.clearSize = s.clearSize().clone();
        t.badFrames = s.badFrames();
        t.unexplainedBadFrames = s.unexplainedBadFrames();
        t.coveredBadFrames = s.coveredBadFrames();
        t.filter.importState(s.filter());
        t.seedLook = s.seedLook() == null ? null : s.seedLook().clone();
        t.look = s.look() == null ? null : s.look().clone();
        t.area = s.area();
        t.clearArea = s.clearArea();
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
