package io.samstream.stream.track;

import io.samstream.connectors.kafka.MaskRecord.Box;
import io.samstream.connectors.kafka.MaskRecord.ObjectMask;
import io.samstream.connectors.kafka.MaskRecord.Rle;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.tensor.Tensor;

/**
 * One object's chosen low-res logits to what a mask record says of it: upscaled to the frame,
 * thresholded at 0, run-length encoded, with its box, area and stability score
 * ({@link SamBackend#postprocessMasks}: on the GPU for the CUDA backend, only the mask bits come back).
 */
public final class MaskReadout {
    /** SAM's {@code stability_score_offset}: the mask thresholded at +1 and at -1. */
    public static final float STABILITY_OFFSET = 1.0f;

    private final SamBackend backend;

    /** Post-processes on {@code backend} ({@link SamBackend#postprocessMasks}: the GPU for CUDA). */
    public MaskReadout(SamBackend backend) {
        this.backend = backend;
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
        MaskSummary m = backend.postprocessMasks(lowRes, g.resized(), g.original()).get(0);
        int[] b = m.box();
        ObjectMask o = new ObjectMask(id, finite(predictedIou), m.stability(), new Box(b[0], b[1], b[2], b[3]),
                m.area(), new Rle(g.height(), g.width(), m.rle().countsString()));
        return new Readout(o, m.area() == 0 ? null : new double[] {b[0], b[1], b[2], b[3]});
    }

    private static float finite(float v) {
        return Float.isFinite(v) ? v : 0f;
    }
}
