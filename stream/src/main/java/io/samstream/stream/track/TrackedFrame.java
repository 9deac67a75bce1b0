package io.samstream.stream.track;

import io.samstream.connectors.record.MaskRecord.ObjectMask;
import java.util.ArrayList;
import java.util.List;

/**
 * What tracking makes of one frame, in every mode: the objects' good masks (prompt order, then discovered ones;
 * never an empty or untaken mask), the ids coasting in it ({@code hidden}: a bad frame, not yet lost) and the ids
 * lost in it (each reported once). The records' objects ({@link #objects()}) are run-length encoded when first
 * asked for.
 */
public record TrackedFrame(List<MaskReadout.Readout> masks, List<Integer> hidden, List<Integer> lost) {
    /** A frame with nothing coasting (fixed prompts). */
    public TrackedFrame(List<MaskReadout.Readout> masks, List<Integer> lost) {
        this(masks, List.of(), lost);
    }

    /** The records' objects, in order (encodes each mask's RLE at the first call). */
    public List<ObjectMask> objects() {
        List<ObjectMask> out = new ArrayList<>(masks.size());
        for (MaskReadout.Readout r : masks) {
            out.add(r.object());
        }
        return out;
    }
}
