package io.samstream.gpu.sam3;

/**
 * A feature tensor of SAM 3 as its parts hand it on (the trunk's map, a neck's level, the fusion encoder's memory, a
 * tracked object's memory encoding): its values on the CPU through {@link #values}. A backend that keeps its tensors
 * on a device hands on maps whose values stay there (its next part reads them in place) and are brought back only
 * when the CPU asks. A map may be {@link #release}d when nothing will read it again, so that its device memory can be
 * reused without bringing the values back first; whoever stores a map owns that release (a tracked object's
 * {@code ObjectMemory}, a frame's {@link VisionFeatures}).
 */
public interface FeatureMap {
    /** The number of values. */
    long length();

    /**
     * The values, fp32 (a device map brings them back: the image path's once, keeping them; a tracker memory on each
     * call). Never written by readers. A released map may throw {@link IllegalStateException}.
     */
    float[] values();

    /** Nothing will read this map again; a device map's memory may be reused. Reading it afterwards may fail. */
    default void release() {}

    /** A map of values already on the CPU. */
    static FeatureMap of(float[] values) {
        return new Host(values);
    }

    /** The values of every map, in order. */
    static float[][] values(FeatureMap[] maps) {
        float[][] out = new float[maps.length][];
        for (int i = 0; i < maps.length; i++) {
            out[i] = maps[i].values();
        }
        return out;
    }

    /** Each array as a map, in order. */
    static FeatureMap[] of(float[][] values) {
        FeatureMap[] out = new FeatureMap[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = of(values[i]);
        }
        return out;
    }

    /** Values on the CPU. */
    record Host(float[] values) implements FeatureMap {
        public Host {
            if (values == null) {
                throw new IllegalArgumentException("feature values: null");
            }
        }

        @Override
        public long length() {
            return values.length;
        }
    }
}
