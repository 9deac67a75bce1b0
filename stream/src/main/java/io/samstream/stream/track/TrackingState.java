package io.samstream.stream.track;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * What a stream's tracker hands to the engine that takes the stream over (failover), in any mode: written into the
 * stream's state record under {@link #key}, read back by the mode that wrote it.
 */
public interface TrackingState {
    /** The field of the stream's state record that holds it (one per mode). */
    String key();

    /** The ids of the objects it carries, in order. */
    List<Integer> ids();

    ObjectNode toJson();
}
