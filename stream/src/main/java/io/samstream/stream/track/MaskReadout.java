package io.samstream.stream.track;

import io.samstream.connectors.record.MaskRecord.Box;
import io.samstream.connectors.record.MaskRecord.ObjectMask;
import io.samstream.connectors.record.MaskRecord.Rle;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * One object's chosen low-res logits to what a mask record says of it: upscaled to the frame,
 * thresholded at 0, run-length encoded, with its box, area and stability score
 * ({@link SamBackend#postprocessWave}: on the GPU for the CUDA backend, reading the decoder's logits in place;
 * only the mask bits come back).
 */
public final class MaskReadout {
    private final SamBackend backend;

    /** Post-processes on {@code backend} ({@link SamBackend#postprocessWave}: the GPU for CUDA). */
    public MaskReadout(SamBackend backend) {
        this.backend = backend;
    }

    /**
     * One object's post-processed mask: its summary (bits, area, box, stability) and predicted IoU. The record's
     * object, with the COCO RLE string (the costly part: O(runs)), is made when first asked for
     * ({@link #object()}), so that the engine encodes records in parallel after the tracks are settled.
     */
    public static final class Readout {
        private final int id;
        private final float score;
        private final MaskSummary summary;
        private final double[] box;
        private final String concept;
        private volatile ObjectMask object;

        public Readout(int id, float score, MaskSummary summary) {
            this(id, score, summary, null);
        }

        /** An object a concept found (SAM 3): the record's object names it. */
        public Readout(int id, float score, MaskSummary summary, String concept) {
            this.id = id;
            this.score = score;
            this.summary = summary;
            this.concept = concept;
            int[] b = summary.box();
            this.box = summary.area() == 0 ? null : new double[] {b[0], b[1], b[2], b[3]};
        }

        public int id() {
            return id;
        }

        /** The predicted IoU (0 where the decoder gave no finite value). */
        public float score() {
            return score;
        }

        public float stability() {
            return summary.stability();
        }

        public MaskSummary summary() {
            return summary;
        }

        /** The mask's box {@code [x0, y0, x1, y1]} in pixels (x1, y1 exclusive); null when the mask is empty. */
        public double[] box() {
            return box;
        }

        /** The concept that found the object; null for prompted and discovered ones. */
        public String concept() {
            return concept;
        }

        public boolean empty() {
            return box == null;
        }

        /** The record's object: made (run-length encoded) at the first call, then kept. */
        public ObjectMask object() {
            ObjectMask o = object;
            if (o == null) {
                int[] b = summary.box();
                o = new ObjectMask(id, score, summary.stability(), new Box(b[0], b[1], b[2], b[3]), summary.area(),
                        new Rle(summary.height(), summary.width(), summary.rle().countsString()), concept);
                object = o;
            }
            return o;
        }
    }

    /**
     * One object of a frame to read: its id, its chosen mask (a decoder output's plane, read where the backend
     * keeps it), its predicted IoU.
     */
    public record Item(int id, DecoderOutput.Plane plane, float predictedIou) {
        /** Host logits {@code [1, L, L]}. */
        public Item(int id, Tensor lowRes, float predictedIou) {
            this(id, DecoderOutput.plane(lowRes, predictedIou), predictedIou);
        }
    }

    public Readout read(int id, Tensor lowRes, float predictedIou, FrameGeometry g) {
        return readAll(List.of(new Item(id, lowRes, predictedIou)), g).get(0);
    }

    /** Every object of a frame at once: one {@link SamBackend#postprocessWave} request for all their planes. */
    public List<Readout> readAll(List<Item> items, FrameGeometry g) {
        if (items.isEmpty()) {
            return List.of();
        }
        return readouts(items, g, backend.postprocessWave(List.of(request(items, g))).get(0));
    }

    /** The post-processing request of a frame's objects: their planes, with its geometry. */
    public static SamBackend.MaskRequest request(List<Item> items, FrameGeometry g) {
        return new SamBackend.MaskRequest(items.stream().map(Item::plane).toList(), g.resized(), g.original());
    }

    /** The records' objects from the summaries of {@link #request}'s planes, in order. */
    public static List<Readout> readouts(List<Item> items, FrameGeometry g, List<MaskSummary> summaries) {
        if (summaries.size() != items.size()) {
            throw new IllegalStateException(summaries.size() + " mask summaries for " + items.size() + " objects");
        }
        List<Readout> out = new ArrayList<>(items.size());
        for (int i = 0; i < items.size(); i++) {
            out.add(new Readout(items.get(i).id(), finite(items.get(i).predictedIou()), summaries.get(i)));
        }
        return out;
    }

    private static float finite(float v) {
        return Float.isFinite(v) ? v : 0f;
    }
}
