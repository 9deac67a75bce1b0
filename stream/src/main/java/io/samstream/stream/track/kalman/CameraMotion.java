package io.samstream.stream.track.kalman;

import io.samstream.gpu.model.EmbeddingMatcher;
import io.samstream.gpu.model.ImageEmbedding;

/**
 * How the whole image moved since the previous frame (a shaking or panning camera), found on the frames'
 * embeddings ({@link EmbeddingMatcher}): the shift of whole embedding cells whose mean cosine over the image is
 * highest, refined to a fraction of a cell by a parabola through its neighbours on each axis. The tracker moves
 * every track's predicted box by it, so that the filter's velocity is the object's own and the box SAM is prompted
 * with lies where the object now is; otherwise a camera shake of a few pixels offsets the prompt and SAM returns a
 * part of the object (a thin ring's arc: bench/results/track-eval-hard-5.md).
 *
 * <p>A camera is taken as still until the best shift is at least one whole cell, and again once it has not been
 * for {@value #STILL_AFTER} frames: objects moving on their own pull the estimate by a fraction of a cell, and on
 * a still camera that fraction, added to every coasting track each frame, would walk it off its object. Ties go
 * to no motion (a flat image matches every shift equally).
 */
final class CameraMotion implements AutoCloseable {
    /** Shifts tried, in embedding cells, either way on each axis (48 model pixels at SAM's 16 a cell). */
    static final int RANGE = 3;
    /** Frames after the last whole-cell shift for which sub-cell shifts are still applied. */
    static final int STILL_AFTER = 10;

    private final EmbeddingMatcher matcher;
    private long frames;
    /** The frame count at the last whole-cell shift; -1 while the camera has never moved. */
    private long moved = -1;

    CameraMotion(EmbeddingMatcher matcher) {
        if (matcher.range() != RANGE) {
            throw new IllegalArgumentException("camera motion needs a matcher of range " + RANGE + ", got "
                    + matcher.range());
        }
        this.matcher = matcher;
    }

    /**
     * The image's shift {@code [dx, dy]} in embedding cells since the previous frame (what was at (x, y) is now at
     * (x + dx, y + dy)); zero for the first frame, a change of size, or a still camera.
     *
     * @param cols the embedding's cells across the image (the rest is padding)
     * @param rows the cells down the image
     */
    double[] step(ImageEmbedding embedding, int cols, int rows) {
        double[] score = matcher.match(embedding, cols, rows);
        if (score == null) {
            frames++;
            return new double[2];
        }
        return shift(score);
    }

    /** {@link #step}'s shift from one frame's matcher scores. */
    double[] shift(double[] score) {
        frames++;
        int w = 2 * RANGE + 1;
        int still = RANGE * w + RANGE;
        int best = still;
        for (int i = 0; i < score.length; i++) {
            if (score[i] > score[best]) {
                best = i;
            }
        }
        if (best != still) {
            moved = frames;
        }
        if (moved < 0 || frames - moved > STILL_AFTER) {
            return new double[2];
        }
        int bx = best % w;
        int by = best / w;
        return new double[] {bx - RANGE + vertex(score, best, 1, bx, w), by - RANGE + vertex(score, best, w, by, w)};
    }

    /** The offset (-0.5 .. 0.5) of the parabola's vertex through the best score and its two neighbours on an axis. */
    private static double vertex(double[] s, int i, int step, int at, int w) {
        if (at == 0 || at == w - 1) {
            return 0;
        }
        double l = s[i - step];
        double m = s[i];
        double r = s[i + step];
        double den = l - 2 * m + r;
        return den < 0 ? Math.max(-0.5, Math.min(0.5, 0.5 * (l - r) / den)) : 0;
    }

    @Override
    public void close() {
        matcher.close();
    }
}
