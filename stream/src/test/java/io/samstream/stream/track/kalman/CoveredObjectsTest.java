package io.samstream.stream.track.kalman;

import static io.samstream.stream.track.kalman.Jobs.L;
import static io.samstream.stream.track.kalman.Jobs.box;
import static io.samstream.stream.track.kalman.Jobs.job;
import static io.samstream.stream.track.kalman.Jobs.rect;
import static io.samstream.stream.track.kalman.Jobs.track;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.EngineSettings;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link CoveredObjects}: a hidden track under other objects, lost as taken over, then coasting as a lost one. */
class CoveredObjectsTest {
    /** lost-after 3, hidden-lost-after 10; re-identification on (window 20) or off. */
    static EngineSettings.Tracking settings(int reidWindow) {
        return new EngineSettings.Tracking(true, 3, 0.5, 0.6, 0.85, 10, 0.3, 0.4, reidWindow, 0.5);
    }

    static Work occluder(int id, int x0, int x1) {
        return job(id, track(id, box(x0, 4, x1, 28)), rect(x0, 4, x1, 28), rect(x0, 4, x1, 28), box(x0, 4, x1, 28));
    }

    @Test
    void aPredictedBoxUnderOtherObjectsIsCovered() {
        CoveredObjects covers = new CoveredObjects(settings(20));
        Work hidden = job(3, track(3, box(8, 8, 24, 24)), rect(0, 0, 0, 0), rect(8, 8, 24, 24), box(8, 8, 24, 24));
        Work left = occluder(1, 4, 16);
        Work right = occluder(2, 16, 28);
        assertTrue(covers.covered(hidden, List.of(left, right, hidden), Set.of(), L, L), "two objects cover it");
        assertFalse(covers.covered(hidden, List.of(left, hidden), Set.of(), L, L), "half of it shows");
        assertFalse(covers.covered(hidden, List.of(left, right, hidden), Set.of(right), L, L),
                "a jumped mask covers nothing");
        // The box's sample columns lie at x 8.5 .. 23.5: the last one shows (15 of 16 covered), then the last two.
        assertTrue(covers.covered(hidden, List.of(left, occluder(2, 16, 23), hidden), Set.of(), L, L), "94 %");
        assertFalse(covers.covered(hidden, List.of(left, occluder(2, 16, 22), hidden), Set.of(), L, L),
                "88 %: below 90 % covered");
        Work off = job(4, track(4, box(40, 8, 50, 24)), rect(0, 0, 0, 0), rect(0, 0, 0, 0), box(40, 8, 50, 24));
        assertFalse(covers.covered(off, List.of(left, right, off), Set.of(), L, L), "predicted out of the frame");
    }

    @Test
    void coveredFramesInARowLoseTheTrackOnlyWithReidentification() {
        Track t = track(1, box(8, 8, 24, 24));
        CoveredObjects on = new CoveredObjects(settings(20));
        CoveredObjects off = new CoveredObjects(settings(0));
        t.bad(true, true);
        t.bad(true, true);
        assertFalse(on.lost(t), "2 covered frames of 3");
        t.bad(true, true);
        assertTrue(on.lost(t), "lost-after covered frames in a row");
        assertFalse(off.lost(t), "without re-identification it coasts up to hidden-lost-after");
        assertTrue(on.coasting(t), "followed on where its filter predicts it");
    }

    @Test
    void aLostCoveredTrackCoastsUntilItIsNotExplainedOrTooLong() {
        CoveredObjects covers = new CoveredObjects(settings(20));
        Track unexplained = track(1, box(8, 8, 24, 24));
        for (int i = 0; i < 3; i++) {
            unexplained.bad(true, true);
        }
        for (int i = 0; i < 3; i++) {
            unexplained.bad(false);
        }
        assertFalse(covers.coasting(unexplained), "lost-after bad frames nothing explains");
        Track longHidden = track(2, box(8, 8, 24, 24));
        for (int i = 0; i < 3; i++) {
            longHidden.bad(true, true);
        }
        for (int i = 0; i < 6; i++) {
            longHidden.bad(true);
        }
        assertTrue(covers.coasting(longHidden), "9 bad frames of hidden-lost-after 10");
        longHidden.bad(true);
        assertFalse(covers.coasting(longHidden), "hidden-lost-after bad frames: probed at its last box instead");
        Track never = track(3, box(8, 8, 24, 24));
        never.bad(true);
        assertFalse(covers.coasting(never), "never covered");
    }
}
