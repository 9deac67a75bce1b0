package io.samstream.stream.track;

import io.samstream.connectors.kafka.MaskRecord.Box;
import io.samstream.connectors.kafka.MaskRecord.ObjectMask;
import io.samstream.connectors.kafka.MaskRecord.Rle;
import io.samstream.gpu.image.MaskPostprocessor;
import io.samstream.gpu.mask.CocoRle;
import io.samstream.gpu.tensor.Tensor;

/**
 * One object's chosen low-res logits to what a mask record says of it: upscaled to the frame,
 * thresholded at 0, run-length encoded, with its box, area and stability score.
 */
public final class MaskReadout {
    /** SAM's {@code stability_score_offset}: the mask thresholded at +1 and at -1. */
    public static final float STABILITY_OFFSET = 1.0f;

    private final MaskPostprocessor postprocessor;

    public MaskReadout(int inputSize) {
        this.postprocessor = new MaskPostprocessor(inputSize);
    }

    /**
     * The record's object and the mask's box in pixels.
     *
     * @param box the mask's box {@code [x0, y0, x1, y1]} (x1, y1 exclusive); null when the mask is empty
     */
    public record Readout(ObjectMask object, double[] box) {
        public boolean empty() {
            return box == null;
        }
    }

    public Readout read(int id, Tensor lowRes, float predictedIou, FrameGeometry g) {
        float[] logits = postprocessor.upscaleLogits(lowRes, g.resized(), g.original()).data();
        boolean[] mask = MaskPostprocessor.threshold(logits, 0, logits.length);
        CocoRle rle = CocoRle.ofMask(mask, g.height(), g.width());
        int[] b = rle.boundingBoxCorners();
        ObjectMask o = new ObjectMask(id, finite(predictedIou), stabilityScore(logits), new Box(b[0], b[1], b[2], b[3]),
                rle.area(), new Rle(g.height(), g.width(), rle.countsString()));
        return new Readout(o, rle.area() == 0 ? null : new double[] {b[0], b[1], b[2], b[3]});
    }

    /**
     * SAM's {@code calculate_stability_score} on the upscaled logits: the IoU of the mask thresholded at
     * {@code +offset} and at {@code -offset} (the first lies inside the second). 0 when both are empty
     * (where SAM would divide by zero), so records stay valid JSON.
     */
    public static float stabilityScore(float[] logits) {
        long inner = 0;
        long outer = 0;
        for (float v : logits) {
            if (v > MaskPostprocessor.MASK_THRESHOLD + STABILITY_OFFSET) {
                inner++;
            }
            if (v > MaskPostprocessor.MASK_THRESHOLD - STABILITY_OFFSET) {
                outer++;
            }
        }
        return outer == 0 ? 0f : (float) ((double) inner / outer);
    }

    private static float finite(float v) {
        return Float.isFinite(v) ? v : 0f;
    }
}
