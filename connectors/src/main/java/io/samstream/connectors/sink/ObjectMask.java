package io.samstream.connectors.sink;

import java.util.Objects;

/**
 * One object's mask in one frame, as the overlay draws it.
 *
 * @param objectId the object's id (its colour follows from it: {@link ObjectPalette})
 * @param mask     row-major, {@code width * height} of the frame, true inside the object
 */
public record ObjectMask(String objectId, boolean[] mask) {
    public ObjectMask {
        Objects.requireNonNull(objectId, "objectId");
        Objects.requireNonNull(mask, "mask");
    }
}
