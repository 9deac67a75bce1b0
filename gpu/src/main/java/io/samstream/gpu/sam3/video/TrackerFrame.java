package io.samstream.gpu.sam3.video;

import io.samstream.gpu.sam2.FrameFeatures;

/**
 * One frame's tracker features ({@link FrameFeatures}: the map the memory attention conditions, its position and the
 * decoder's conv_s0 / conv_s1 maps) where the tracker passes keep them: the CPU reference's on the host, a GPU's in
 * its device slots, whose values come back only when the CPU asks for them (a new object's pointer). Made by {@link
 * TrackerPasses#features} once a frame, read by that frame's passes, {@link #release}d after its step so that a
 * device can reuse its slots.
 */
public interface TrackerFrame {
    /** The features on the CPU (a device frame brings them back, once). */
    FrameFeatures host();

    /** Nothing reads this frame again; a device frame's slots may be reused. */
    default void release() {}

    /** Features already on the CPU. */
    static TrackerFrame of(FrameFeatures features) {
        return new Host(features);
    }

    /** Features on the CPU. */
    record Host(FrameFeatures host) implements TrackerFrame {
        public Host {
            if (host == null) {
                throw new IllegalArgumentException("tracker features: null");
            }
        }
    }
}
