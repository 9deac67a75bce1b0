package io.samstream.gpu.sam3;

import java.util.List;

/**
 * What a concept prompt found on an image, in the image's pixels (Meta's {@code Sam3Processor} output).
 *
 * @param presence  the probability that the concept is in the image at all (sigmoid of the presence logit)
 * @param instances the queries whose probability passed the threshold, best first
 */
public record Sam3Result(float presence, List<Instance> instances) {
    /**
     * One instance.
     *
     * @param query the decoder query it came from
     * @param score sigmoid(query logit) * presence
     * @param box   (x0, y0, x1, y1) in image pixels
     * @param mask  row-major [height * width], the mask logits upsampled bilinearly and thresholded at 0
     */
    public record Instance(int query, float score, float[] box, boolean[] mask) {}
}
