package io.samstream.gpu.sam3.video;
import io.samstream.gpu.sam3.FeatureMap;

/**
 * Memories for scripted tracker passes that keep count of themselves, as a GPU's bank would of its slots: how many
 * were made and are not released yet ({@link #live}), and any misuse a device bank would turn into a wrong result
 * or a leak: a read after release (thrown, and counted) and a second release (counted).
 */
final class CountedMemories {
    int made;
    int live;
    int lateReads;
    int doubleReleases;

    FeatureMap of(float[] values) {
        made++;
        live++;
        return new FeatureMap() {
            private boolean released;

            @Override
            public long length() {
                return values.length;
            }

            @Override
            public float[] values() {
                if (released) {
                    lateReads++;
                    throw new IllegalStateException("a released memory is read");
                }
                return values;
            }

            @Override
            public void release() {
                if (released) {
                    doubleReleases++;
                    return;
                }
                released = true;
                live--;
            }
        };
    }
}
