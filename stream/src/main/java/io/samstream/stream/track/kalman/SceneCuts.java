package io.samstream.stream.track.kalman;

import io.samstream.gpu.model.EmbeddingPool;
import java.util.List;
import java.util.OptionalDouble;

/**
 * Scene cuts: an image whose layout (its {@value #REGIONS} x {@value #REGIONS} regions' mean embeddings less the
 * image's mean) is unlike the previous frame's ({@link EmbeddingPool#similarity} against zero below {@code
 * scene-cut-similarity}) shows another scene, so what the tracks followed is gone. Remembers the last frame's layout.
 */
final class SceneCuts {
    /** The image's layout: its cells in this many regions a side, each region's mean less the image's. */
    static final int REGIONS = 4;
    /** A layout whose energy is at most this share of the image mean's (per region) is flat ({@link #layout}). */
    private static final double FLAT = 1e-6;

    private final double minSimilarity;
    /** The last frame's layout; null before the first or when it had none. */
    private float[] last;

    /** @param minSimilarity {@code scene-cut-similarity}; 0 or less: off (a layout can score below 0) */
    SceneCuts(double minSimilarity) {
        this.minSimilarity = minSimilarity;
    }

    /**
     * The regions' means less the image's, end to end; null when any is missing or the image is flat (no region
     * stands out: nothing to compare a cut by).
     */
    static float[] layout(float[] imageMean, List<float[]> regions) {
        if (imageMean == null) {
            return null;
        }
        int c = imageMean.length;
        float[] out = new float[c * regions.size()];
        double contrast = 0;
        double level = 0;
        for (int r = 0; r < regions.size(); r++) {
            float[] m = regions.get(r);
            if (m == null) {
                return null;
            }
            for (int i = 0; i < c; i++) {
                out[r * c + i] = m[i] - imageMean[i];
                contrast += (double) out[r * c + i] * out[r * c + i];
                level += (double) imageMean[i] * imageMean[i];
            }
        }
        return contrast > FLAT * level ? out : null;
    }

    /**
     * This frame's layout against the last one's (then kept as the last): the similarity when it is a cut, empty when
     * it is not, when either layout is missing, or when the rule is off.
     */
    OptionalDouble cut(float[] layout) {
        float[] before = last;
        last = layout;
        if (before == null || layout == null || minSimilarity <= 0) {
            return OptionalDouble.empty();
        }
        double similarity = EmbeddingPool.similarity(layout, before, new float[layout.length]);
        return similarity < minSimilarity ? OptionalDouble.of(similarity) : OptionalDouble.empty();
    }
}
