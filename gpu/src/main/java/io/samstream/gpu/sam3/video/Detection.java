package io.samstream.gpu.sam3.video;

/**
 * One instance the detector found on a frame, as the video model keeps it ({@code det_out}): its query, its score
 * (sigmoid(logit) x sigmoid(presence), as a probability clamped to the logit range [-10, 10]), its box (x0, y0, x1,
 * y1 in 0..1 of the frame) and its mask logits at the low resolution [(4 grid)²].
 */
public record Detection(int query, float score, float[] box, float[] maskLogits) {}
