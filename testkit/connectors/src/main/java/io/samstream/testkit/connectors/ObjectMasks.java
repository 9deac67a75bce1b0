package io.samstream.testkit.connectors;

import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.testkit.CocoMasks;

/** The mask of an object of a masks record, decoded by the testkit's own RLE decoder ({@link CocoMasks}). */
public final class ObjectMasks {
    private ObjectMasks() {}

    /** The object's mask, row-major, at the record's size. */
    public static boolean[] decode(MaskRecord.ObjectMask o) {
        return CocoMasks.decode(o.mask().counts(), o.mask().height(), o.mask().width());
    }
}
