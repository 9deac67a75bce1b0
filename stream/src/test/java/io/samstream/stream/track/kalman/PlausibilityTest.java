package io.samstream.stream.track.kalman;

import static io.samstream.stream.track.kalman.Jobs.L;
import static io.samstream.stream.track.kalman.Jobs.box;
import static io.samstream.stream.track.kalman.Jobs.job;
import static io.samstream.stream.track.kalman.Jobs.rect;
import static io.samstream.stream.track.kalman.Jobs.track;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.stream.track.FrameGeometry;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link Plausibility}: a followed mask unlike its object in look, place or size is not the object. */
class PlausibilityTest {
    static final FrameGeometry FRAME = new FrameGeometry(L, L, 1024, 256);
    static final float[] MEAN = {0, 0};
    static final Plausibility RULE = new Plausibility(0.5);

    /** A followed job of a track last seen 8 x 8 at (8, 8) with look (1, 0), now decoded to {@code mask}. */
    static Work followed(boolean[] mask, float[] look) {
        Track t = track(1, box(8, 8, 16, 16));
        t.remember(new float[] {1, 0}, 64, true);
        Work w = job(1, t, mask, rect(8, 8, 16, 16), box(8, 8, 16, 16));
        w.look = look;
        return w;
    }

    static Map<Work, String> unlike(Work... work) {
        return RULE.unlike(List.of(work), Set.of(), Set.of(), MEAN, FRAME);
    }

    @Test
    void aMaskThatLooksLikeItsObjectWhereItWasIsKept() {
        assertEquals(Map.of(), unlike(followed(rect(9, 8, 17, 16), new float[] {0.9f, 0.1f})));
    }

    @Test
    void aMaskThatLooksUnlikeItsObjectIsNot() {
        Work w = followed(rect(9, 8, 17, 16), new float[] {0, 1});
        assertEquals(Map.of(w, "appearance 0.00"), unlike(w));
    }

    @Test
    void aMaskAwayFromThePredictedBoxIsNot() {
        Work w = followed(rect(20, 20, 28, 28), new float[] {1, 0});
        assertEquals(Map.of(w, "left its predicted box"), unlike(w));
    }

    @Test
    void aMaskThatGrewOrShrankTooMuchInOneFrameIsNot() {
        Work grown = followed(rect(4, 4, 18, 16), new float[] {1, 0}); // 168 px: x2.63
        assertEquals(Map.of(grown, "area x2.63 in one frame"), unlike(grown));
        assertEquals(Map.of(), unlike(followed(rect(4, 6, 18, 16), new float[] {1, 0})), "140 px: x2.19");
        Work shrunk = followed(rect(8, 8, 13, 13), new float[] {1, 0}); // 25 px: x0.39
        assertEquals(Map.of(shrunk, "area x0.39 in one frame"), unlike(shrunk));
    }

    @Test
    void sizeAndPlaceAreNotJudgedAtTheEdgeOrBesideAnotherObject() {
        Work w = followed(rect(8, 8, 16, 16), new float[] {1, 0});
        w.track.remember(new float[] {1, 0}, 200, true);
        w.read = Jobs.read(1, rect(0, 8, 3, 16), 0.9f);
        w.mask = rect(0, 8, 3, 16);
        w.predicted = box(0, 8, 8, 16);
        assertEquals(Map.of(), unlike(w), "24 px of 200 at the frame's edge: an object leaving the frame");
        Work beside = followed(rect(4, 4, 18, 16), new float[] {1, 0});
        Work other = job(2, track(2, box(16, 4, 24, 16)), rect(16, 4, 24, 16), rect(16, 4, 24, 16),
                box(16, 4, 24, 16));
        assertEquals(Map.of(), unlike(beside, other), "grown into a neighbour: the occlusion rules judge it");
        Work seed = job(3, null, rect(20, 20, 28, 28), null, null);
        assertTrue(unlike(seed).isEmpty(), "a seed is the user's prompt");
    }
}
