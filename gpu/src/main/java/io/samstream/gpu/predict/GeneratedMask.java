package io.samstream.gpu.predict;

import io.samstream.gpu.mask.CocoRle;
import io.samstream.gpu.tensor.Tensor;

/**
 * One mask found by {@link AutomaticMaskGenerator}.
 *
 * @param lowResLogits the chosen multimask output's low-res logits {@code [1, L, L]} (a dense mask prompt
 *                     for the next frame)
 * @param predictedIou the IoU head's estimate of the mask's quality
 * @param stability    the stability score of the mask at the image's size (offset from the settings)
 * @param box          {@code [x0, y0, x1, y1]} of the mask's pixels in original-image pixels, x1 and y1
 *                     exclusive (pixel edges, as {@code masks.json} and the mask records give boxes)
 * @param area         the mask's pixel count at the image's size
 * @param point        the grid point {@code (x, y)} that prompted it, in original-image pixels
 * @param rle          the mask at the image's size: the upscaled logits above 0, after the small-region
 *                     clean-up when {@code minArea > 0}; null when not known (the 6-argument constructor)
 */
public record GeneratedMask(Tensor lowResLogits, float predictedIou, float stability, double[] box, long area,
        double[] point, CocoRle rle) {

    /** A mask whose full-size pixels are not at hand (e.g. made up in a test). */
    public GeneratedMask(Tensor lowResLogits, float predictedIou, float stability, double[] box, long area,
            double[] point) {
        this(lowResLogits, predictedIou, stability, box, area, point, null);
    }
}
