package io.samstream.gpu.sam3.video;

/**
 * One instance the detector found on a frame, as the video model keeps it ({@code det_out}): its query, its score
 * (sigmoid(logit) x sigmoid(presence), as a probability clamped to the logit range [-10, 10]), its box (x0, y0, x1,
 * y1 in 0..1 of the frame) and its mask logits at the low resolution [(4 grid)²]. The mask is also packed to bits
 * once, here: mask NMS and the matching to tracks both compare it, and a frame can bring hundreds of detections.
 */
public final class Detection {
    private final int query;
    private final float score;
    private final float[] box;
    private final float[] maskLogits;
    private final PackedMask bits;

    public Detection(int query, float score, float[] box, float[] maskLogits) {
        this.query = query;
        this.score = score;
        this.box = box;
        this.maskLogits = maskLogits;
        this.bits = PackedMask.of(maskLogits);
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

    public float[] maskLogits() {
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
