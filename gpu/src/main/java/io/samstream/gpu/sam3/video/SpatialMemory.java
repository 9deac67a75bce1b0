package io.samstream.gpu.sam3.video;

import io.samstream.gpu.sam3.FeatureMap;

/**
 * One object's memory features of one frame ([grid², memDim], bf16-exact values), as {@link TrackerPasses#encodeMemory}
 * makes them and {@link TrackerPasses#propagate} reads them back ({@link Sam3TrackerModel.Spatial}): wherever the
 * passes keep them. The CPU reference and the tests' scripts keep them as a float[] ({@link #host}); a GPU's passes
 * keep them in a slot of device memory and hand out a handle to it, so that a memory never visits the host between
 * the frame that encodes it and the frames that read it.
 *
 * <p>A {@link FeatureMap}, as the image path's maps are: {@link #release} gives back what holds it (a device slot).
 *
 * <p>Ownership: the {@link ObjectMemory} that stores a memory owns it and {@link #release}s it when no later frame can
 * read it (pruned, replaced, its object dropped). A released memory must not be read again; releasing twice does
 * nothing. A memory never released explicitly (its holder forgotten) is reclaimed by its passes once the garbage
 * collector finds it unreachable, so forgetting one costs device memory for a while, never correctness.
 */
public interface SpatialMemory extends FeatureMap {
    /**
     * Its values in fp32: a host memory's own array (do not modify it), a device memory's downloaded afresh (each call
     * waits for the device; the passes themselves never call this on their own memories).
     *
     * @throws IllegalStateException when it was released, or its passes are closed
     */
    @Override
    float[] values();

    /** A memory held in host memory. */
    static SpatialMemory host(float[] values) {
        return new Host(values);
    }

    /** A memory held in host memory: the array itself. */
    record Host(float[] values) implements SpatialMemory {
        public Host {
            if (values == null) {
                throw new IllegalArgumentException("memory features must not be null");
            }
        }

        @Override
        public long length() {
            return values.length;
        }
    }
}
