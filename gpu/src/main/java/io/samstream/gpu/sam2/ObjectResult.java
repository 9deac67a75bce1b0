package io.samstream.gpu.sam2;

/**
 * One object on one frame: the low-resolution mask logits [lowResSide^2] (all -1024 when the object is judged
 * absent), the object score logit (> 0: visible), the object pointer, and whether this frame conditions the
 * object (it was prompted here).
 */
public record ObjectResult(int objectId, float[] lowResLogits, int lowResSide, float objectScore,
        float[] objectPointer, boolean conditioning) {

    public boolean visible() {
        return objectScore > 0;
    }

    /** The mask at h x w: the logits bilinearly resized (align_corners=False), then > 0. */
    public boolean[] mask(int h, int w) {
        float[] up = Resampling.bilinear(lowResLogits, lowResSide, lowResSide, h, w);
        boolean[] m = new boolean[up.length];
        for (int i = 0; i < up.length; i++) {
            m[i] = up[i] > 0;
        }
        return m;
    }
}
