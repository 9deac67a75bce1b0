package io.samstream.stream.track.kalman;

import static io.samstream.stream.track.kalman.Jobs.box;
import static io.samstream.stream.track.kalman.Jobs.job;
import static io.samstream.stream.track.kalman.Jobs.rect;
import static io.samstream.stream.track.kalman.Jobs.track;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link Occlusion}: jumped and crept masks, and bad frames explained by an object in front. */
class OcclusionTest {
    /** The occluder: followed, and its new mask continues its previous one. */
    static Work occluder(int id) {
        return job(id, track(id, box(16, 8, 28, 20)), rect(16, 8, 28, 20), rect(16, 8, 28, 20), box(16, 8, 28, 20));
    }

    @Test
    void aMaskThatLeftItsOwnForAnothersHasJumped() {
        Work front = occluder(1);
        // Object 2 was at x 4..14; its new mask lies on the occluder's.
        Work slid = job(2, track(2, box(4, 8, 14, 20)), rect(17, 8, 27, 20), rect(4, 8, 14, 20), box(5, 8, 15, 20));
        assertEquals(Set.of(slid), Occlusion.jumped(List.of(front, slid)));
        // Still mostly its own previous mask (IoU 0.5 or more): not a jump, however much it overlaps the other.
        Work stays = job(2, track(2, box(12, 8, 24, 20)), rect(14, 8, 26, 20), rect(12, 8, 24, 20), box(12, 8, 24, 20));
        assertEquals(Set.of(), Occlusion.jumped(List.of(front, stays)));
        // The other object broke with its own previous mask more: it is not the one that jumped.
        Work wild = job(1, track(1, box(0, 0, 6, 6)), rect(16, 8, 28, 20), rect(0, 0, 6, 6), box(0, 0, 6, 6));
        Work partly = job(2, track(2, box(10, 8, 22, 20)), rect(16, 8, 28, 20), rect(8, 8, 22, 20), box(10, 8, 22, 20));
        assertEquals(Set.of(wild), Occlusion.jumped(List.of(wild, partly)));
    }

    @Test
    void aMaskThatGrewIntoAnotherObjectHasCrept() {
        Work front = occluder(1);
        Track t = track(2, box(18, 10, 24, 16));
        t.remember(null, 36, true); // 6 x 6 when last clear
        // Now 8 x 8 (64 > 1.4 x 36), lying inside the occluder's mask, which is not mostly in it.
        Work crept = job(2, t, rect(18, 10, 26, 18), rect(18, 10, 24, 16), box(18, 10, 24, 16));
        assertEquals(Set.of(crept), Occlusion.inside(List.of(front, crept), Set.of(), Set.of()));
        assertEquals(Set.of(), Occlusion.inside(List.of(front, crept), Set.of(front), Set.of()), "the other is gone");
        Track small = track(3, box(18, 10, 24, 16));
        small.remember(null, 49, true); // 64 <= 1.4 x 49: a normal change of size
        Work grown = job(3, small, rect(18, 10, 26, 18), rect(18, 10, 24, 16), box(18, 10, 24, 16));
        assertEquals(Set.of(), Occlusion.inside(List.of(front, grown), Set.of(), Set.of()));
    }

    @Test
    void aBadFrameIsHiddenWhenThePredictedBoxMeetsAnotherObjectsMask() {
        Work front = occluder(1);
        Work behind = job(2, track(2, box(10, 8, 18, 20)), rect(0, 0, 0, 0), rect(10, 8, 18, 20), box(12, 8, 20, 20));
        assertTrue(Occlusion.hidden(behind, List.of(front, behind), Set.of()));
        assertFalse(Occlusion.hidden(behind, List.of(front, behind), Set.of(front)), "a jumped mask hides nothing");
        Work apart = job(3, track(3, box(0, 24, 8, 32)), rect(0, 0, 0, 0), rect(0, 24, 8, 32), box(0, 24, 8, 32));
        assertFalse(Occlusion.hidden(apart, List.of(front, apart), Set.of()), "nothing in front of it");
        Work seed = job(4, null, rect(0, 0, 0, 0), null, null);
        assertFalse(Occlusion.hidden(seed, List.of(front, seed), Set.of()), "a seed has no predicted box");
    }

    @Test
    void boxesOverlapOnlyWhenTheyShareArea() {
        assertTrue(Occlusion.overlap(box(0, 0, 10, 10), box(9, 9, 20, 20)));
        assertFalse(Occlusion.overlap(box(0, 0, 10, 10), box(10, 0, 20, 10)), "x1 is exclusive: touching is apart");
        Work front = occluder(1);
        assertTrue(Occlusion.besideAny(box(26, 18, 30, 22), List.of(front)));
        front.jumped = true;
        assertFalse(Occlusion.besideAny(box(26, 18, 30, 22), List.of(front)), "a jumped mask is not its object");
    }
}
