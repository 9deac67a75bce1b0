package io.samstream.stream.track.kalman;

import io.samstream.config.EngineSettings;
import java.util.List;
import java.util.Set;

/**
 * Covered objects: a hidden track whose predicted box lies wholly under other objects' mask boxes ({@link #covered})
 * cannot show at all: taken over, or behind an occluder for a while. After {@code lost-after} such frames in a row it
 * is reported lost ({@link #lost}); as a lost track it goes on coasting where its filter predicts ({@link #coasting}),
 * as the probe that may find it coming out on the far side.
 */
final class CoveredObjects {
    /** A hidden track whose predicted box lies at least this much under other objects is covered. */
    static final double COVERED = 0.9;
    /** {@link #covered} samples the predicted box on a grid of this many points a side. */
    static final int SAMPLES = 16;

    private final int lostAfter;
    private final int hiddenLostAfter;
    private final boolean reidentifies;

    CoveredObjects(EngineSettings.Tracking settings) {
        this.lostAfter = settings.lostAfter();
        this.hiddenLostAfter = settings.hiddenLostAfter();
        this.reidentifies = settings.reidWindow() > 0;
    }

    /**
     * Whether a hidden track is wholly covered: at least {@value #COVERED} of its predicted box (within the
     * {@code width x height} frame) lies under the mask boxes of the frame's other objects (jumped ones aside).
     */
    boolean covered(Work w, List<Work> work, Set<Work> jumped, int width, int height) {
        double x0 = Math.max(0, w.predicted[0]);
        double y0 = Math.max(0, w.predicted[1]);
        double x1 = Math.min(width, w.predicted[2]);
        double y1 = Math.min(height, w.predicted[3]);
        if (x1 <= x0 || y1 <= y0) {
            return false;
        }
        int under = 0;
        for (int j = 0; j < SAMPLES; j++) {
            double y = y0 + (j + 0.5) * (y1 - y0) / SAMPLES;
            for (int i = 0; i < SAMPLES; i++) {
                double x = x0 + (i + 0.5) * (x1 - x0) / SAMPLES;
                for (Work o : work) {
                    if (o != w && !o.read.empty() && !jumped.contains(o)) {
                        double[] b = o.read.box();
                        if (x >= b[0] && x < b[2] && y >= b[1] && y < b[3]) {
                            under++;
                            break;
                        }
                    }
                }
            }
        }
        return under >= COVERED * SAMPLES * SAMPLES;
    }

    /**
     * Whether a track is lost as taken over: {@code lost-after} of its bad frames in a row were wholly covered. Only
     * with re-identification on, which follows it on as a lost object ({@link #coasting}) and gives it its id back if
     * it comes out; without it the track coasts up to {@code hidden-lost-after}.
     */
    boolean lost(Track t) {
        return reidentifies && t.coveredBadFrames() >= lostAfter;
    }

    /**
     * Whether a lost track is still followed where its filter predicts it rather than probed at its last box: lost as
     * covered, and fewer than {@code hidden-lost-after} bad frames so far.
     */
    boolean coasting(Track t) {
        return t.coveredBadFrames() >= lostAfter && t.unexplainedBadFrames() < lostAfter
                && t.badFrames() < hiddenLostAfter;
    }
}
