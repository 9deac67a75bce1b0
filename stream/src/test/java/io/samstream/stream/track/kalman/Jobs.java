package io.samstream.stream.track.kalman;

import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.MaskReadout;

/**
 * Jobs ({@link Work}) of a frame for the collaborators' tests: masks are rectangles on an {@value #L} x {@value #L}
 * grid, which is both the low-res grid and the frame (one pixel a cell), so that a mask's box in pixels is its
 * rectangle.
 */
final class Jobs {
    static final int L = 32;

    private Jobs() {}

    /** The cells {@code x0 <= x < x1, y0 <= y < y1}, row-major. */
    static boolean[] rect(int x0, int y0, int x1, int y1) {
        boolean[] m = new boolean[L * L];
        for (int y = y0; y < y1; y++) {
            for (int x = x0; x < x1; x++) {
                m[y * L + x] = true;
            }
        }
        return m;
    }

    static double[] box(int x0, int y0, int x1, int y1) {
        return new double[] {x0, y0, x1, y1};
    }

    /** The mask's logits {@code [1, L, L]}: 10 inside, -10 outside (stable). */
    static Tensor logits(boolean[] m) {
        float[] v = new float[m.length];
        for (int i = 0; i < m.length; i++) {
            v[i] = m[i] ? 10 : -10;
        }
        return new Tensor(v, 1, L, L);
    }

    /** A prompted track born on frame 0, last seen at {@code box}. */
    static Track track(int id, double[] box) {
        return track(id, box, Track.Origin.PROMPTED, 0);
    }

    /** A track of {@code origin} born on frame {@code born}, last seen at {@code box}. */
    static Track track(int id, double[] box, Track.Origin origin, long born) {
        return new Track(id, origin, origin == Track.Origin.PROMPTED ? 0 : -1, born, logits(rect((int) box[0],
                (int) box[1], (int) box[2], (int) box[3])), box);
    }

    /**
     * A followed track's job whose decoded mask is {@code mask} (predicted IoU and stability high), with the track's
     * shifted {@code previous} mask and the filter's {@code predicted} box (either may be null: a seed has neither).
     */
    static Work job(int id, Track track, boolean[] mask, boolean[] previous, double[] predicted) {
        Work w = new Work(id, null, true, track, null, 0, previous);
        w.mask = mask;
        w.chosen = logits(mask);
        w.score = 0.9f;
        w.read = read(id, mask, 0.9f);
        w.predicted = predicted;
        return w;
    }

    /** The post-processed mask of {@code mask} at the frame's size (one pixel a cell). */
    static MaskReadout.Readout read(int id, boolean[] mask, float score) {
        return new MaskReadout.Readout(id, score, MaskSummary.of(logits(mask).data(), L, L));
    }
}
