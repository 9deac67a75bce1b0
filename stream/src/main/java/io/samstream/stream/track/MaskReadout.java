package io.samstream.stream.track;

import io.samstream.connectors.kafka.MaskRecord.Box;
import io.samstream.connectors.kafka.MaskRecord.ObjectMask;
import io.samstream.connectors.kafka.MaskRecord.Rle;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.tensor.Tensor;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;

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

    /** One object of a frame to read: its id, its chosen low-res logits {@code [1, L, L]}, its predicted IoU. */
    public record Item(int id, Tensor lowRes, float predictedIou) {}

    public Readout read(int id, Tensor lowRes, float predictedIou, FrameGeometry g) {
        return readAll(List.of(new Item(id, lowRes, predictedIou)), g).get(0);
    }

    /**
     * Every object of a frame at once: one {@link SamBackend#postprocessMasks} call for all their planes (on
     * the GPU one upload, one launch, one download of mask bits, instead of a round trip per object).
     */
    public List<Readout> readAll(List<Item> items, FrameGeometry g) {
        if (items.isEmpty()) {
            return List.of();
        }
        SamBackend.MaskRequest r = request(items, g);
        return readouts(items, g, backend.postprocessMasks(r.lowResLogits(), r.resized(), r.original()));
    }

    /** The post-processing request of a frame's objects: their planes stacked {@code [N, L, L]}, with its geometry. */
    public static SamBackend.MaskRequest request(List<Item> items, FrameGeometry g) {
        int l = items.get(0).lowRes().dim(items.get(0).lowRes().rank() - 1);
        int plane = l * l;
        float[] stacked = new float[items.size() * plane];
        for (int i = 0; i < items.size(); i++) {
            System.arraycopy(items.get(i).lowRes().data(), 0, stacked, i * plane, plane);
        }
        return new SamBackend.MaskRequest(new Tensor(stacked, items.size(), l, l), g.resized(), g.original());
    }

    /** The records' objects from the summaries of {@link #request}'s planes, in order. */
    public static List<Readout> readouts(List<Item> items, FrameGeometry g, List<MaskSummary> summaries) {
        if (summaries.size() != items.size()) {
            throw new IllegalStateException(summaries.size() + " mask summaries for " + items.size() + " objects");
        }
        // The run-length encoding is the costly part (O(runs) per mask): one task per mask.
        Readout[] out = new Readout[items.size()];
        IntStream.range(0, out.length).parallel().forEach(i -> {
            MaskSummary m = summaries.get(i);
            int[] b = m.box();
            ObjectMask o = new ObjectMask(items.get(i).id(), finite(items.get(i).predictedIou()), m.stability(),
                    new Box(b[0], b[1], b[2], b[3]), m.area(), new Rle(g.height(), g.width(), m.rle().countsString()));
            out[i] = new Readout(o, m.area() == 0 ? null : new double[] {b[0], b[1], b[2], b[3]});
        });
        return Arrays.asList(out);
    }

    private static float finite(float v) {
        return Float.isFinite(v) ? v : 0f;
    }
}
