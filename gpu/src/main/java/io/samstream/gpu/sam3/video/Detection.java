package io.samstream.gpu.sam3.video;

/**
 * One instance the detector found on a frame, as the video model keeps it ({@code det_out}): its query, its score
 * (sigmoid(logit) x sigmoid(presence), as a probability clamped to the logit range [-10, 10]), its box (x0, y0, x1,
 * y1 in 0..1 of the frame) and its mask logits at the low resolution [(4 grid)²]. The mask is also packed to bits
 * once, here: mask NMS and the matching to tracks both compare it, and a frame can bring hundreds of detections.
 * Only the few detections that start or refresh a track read their logits, so a detection made from a frame's array
 * of all masks keeps a view of it and copies its own logits out only when they are first read.
 */
public final class Detection {
    private final int query;
    private final float score;
    private final float[] box;
    private final float[] masks;
    private final int from;
    private final int pixels;
    private final PackedMask bits;
    private float[] maskLogits;

    public Detection(int query, float score, float[] box, float[] maskLogits) {
        this(query, score, box, maskLogits, 0, maskLogits.length);
    }

    /** A detection whose mask logits are the {@code pixels} values of {@code masks} from {@code from}. */
    public Detection(int query, float score, float[] box, float[] masks, int from, int pixels) {
        this.query = query;
        this.score = score;
        this.box = box;
        this.masks = masks;
        this.from = from;
        this.pixels = pixels;
        this.bits = PackedMask.of(masks, from, pixels);
        if (from == 0 && pixels == masks.length) {
            this.maskLogits = masks;
        }
    }

    public int query() {
        return query;
    }

    public float score() {
        return score;
    }

    public float[] box() {
        return box;
    }

    /** The mask logits (the same array on every call; callers read it and do not change it). */
    public synchronized float[] maskLogits() {
        if (maskLogits == null) {
            maskLogits = java.util.Arrays.copyOfRange(masks, from, from + pixels);
        }
        return maskLogits;
    }

    /** The mask's pixels above 0, as bits. */
    PackedMask bits() {
        return bits;
    }

    @Override
    public String toString() {
        return "Detection[query=" + query + ", score=" + score + ", area=" + bits.area() + "]";
    }
}
