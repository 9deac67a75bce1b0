package io.samstream.gpu.sam3;

/**
 * What the image encoder gives the detector, channels-last: the ViT's map and the neck's three kept levels at 4x,
 * 2x and 1x the ViT's grid ({@code backbone_fpn}, the 0.5x level is dropped as {@code scalp=1} drops it), and the
 * sine position encoding of the 1x level, which the encoder, decoder and geometry encoder use.
 *
 * @param grid  the ViT's map side (72 at input 1008)
 * @param trunk [grid², embed]
 * @param fpn   fpn[0] [(4 grid)², d], fpn[1] [(2 grid)², d], fpn[2] [grid², d]
 * @param pos   [grid², d]
 */
public record VisionFeatures(int grid, float[] trunk, float[][] fpn, float[] pos) {
    /** The 1x level: the detector's image tokens. */
    public float[] tokens() {
        return fpn[2];
    }
}
