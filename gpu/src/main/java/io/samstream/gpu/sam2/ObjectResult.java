package io.samstream.gpu.sam2;

/**
 * One object on one frame: the low-resolution mask logits [lowResSide^2] (all -1024 when the object is judged
 * absent), the object score logit (> 0: visible), the object pointer, whether this frame conditions the
 * object (it was prompted here), and the decoder's predicted IoU of the chosen mask.
 */
public record ObjectResult(int objectId, float[] lowResLogits, int lowResSide, float objectScore,
        float[] objectPointer, boolean conditioning, float predictedIou) {

    /** Without the decoder's predicted IoU (NaN). */
    public ObjectResult(int objectId, float[] lowResLogits, int lowResSide, float objectScore, float[] objectPointer,
            boolean conditioning) {
        this(objectId, lowResLogits, lowResSide, objectScore, objectPointer, conditioning, Float.NaN);
    }

    public boolean visible() {
        return objectScore > 0;
    }

    /** The logits at h x w: bilinearly resized (align_corners=False), as the predictor sizes masks to the video. */
    public float[] logits(int h, int w) {
        return Resampling.bilinear(lowResLogits, lowResSide, lowResSide, h, w);
    }

    /** The summary of the mask at h x w ({@link #logits} above 0), made without the h x w logits. */
    public io.samstream.gpu.mask.MaskSummary summary(int h, int w) {
        return Resampling.bilinearSummary(lowResLogits, lowResSide, lowResSide, h, w);
    }

    /** The mask at h x w: the logits bilinearly resized (align_corners=False), then > 0. */
    public boolean[] mask(int h, int w) {
        float[] up = logits(h, w);
        boolean[] m = new boolean[up.length];
        for (int i = 0; i < up.length; i++) {
            m[i] = up[i] > 0;
        }
        return m;
    }
}
