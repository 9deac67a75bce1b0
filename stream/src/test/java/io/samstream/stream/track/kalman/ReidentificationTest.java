package io.samstream.stream.track.kalman;

import static io.samstream.stream.track.kalman.Jobs.box;
import static io.samstream.stream.track.kalman.Jobs.job;
import static io.samstream.stream.track.kalman.Jobs.rect;
import static io.samstream.stream.track.kalman.Jobs.track;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.EngineSettings;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link Reidentification}: lost tracks kept for a window, and found again by a probe that is clearly them. */
class ReidentificationTest {
    static final float[] MEAN = {0, 0};
    static final float[] LOOK = {1, 0};

    /** lost-after 3, IoU / stability minimums 0.5 / 0.6, re-id window {@code window}, re-id appearance 0.8. */
    static EngineSettings.Tracking settings(int window) {
        return new EngineSettings.Tracking(true, 3, 0.5, 0.6, 0.85, 10, 0.3, 0.4, window, 0.8);
    }

    /** A track with an appearance memory, last seen at {@code box}. */
    static Track remembered(int id, double[] box) {
        Track t = track(id, box);
        t.remember(LOOK, 64, true);
        return t;
    }

    /** A probe of {@code t} whose mask came out as {@code mask}, looking like {@code look}. */
    static Work probe(Track t, boolean[] mask, float[] look) {
        Work p = job(t.id(), t, mask, null, null);
        p.probe = true;
        p.look = look;
        return p;
    }

    @Test
    void lostTracksAreKeptForTheWindowOnlyWhenItIsOpen() {
        Reidentification off = new Reidentification(settings(0));
        off.lost(remembered(1, box(0, 0, 8, 8)), 5);
        assertTrue(off.ghosts().isEmpty());
        Reidentification reid = new Reidentification(settings(10));
        Track a = remembered(1, box(0, 0, 8, 8));
        Track b = remembered(2, box(10, 0, 18, 8));
        reid.lost(a, 5);
        reid.lost(b, 8);
        reid.expire(15, t -> false);
        assertEquals(List.of(a, b), reid.ghosts().stream().map(Reidentification.Ghost::track).toList());
        reid.expire(16, t -> false);
        assertEquals(List.of(b), reid.ghosts().stream().map(Reidentification.Ghost::track).toList(),
                "more than reid-window frames since it was lost");
        reid.expire(16, t -> t.id() == 2);
        assertTrue(reid.ghosts().isEmpty(), "removed or seeded again");
    }

    @Test
    void aGhostIsLastSeenItsBadFramesBeforeItWasLost() {
        Track t = remembered(1, box(0, 0, 8, 8));
        t.bad();
        t.bad();
        t.bad();
        assertEquals(17, new Reidentification.Ghost(t, 20).seenFrame());
    }

    @Test
    void aProbeFindsItsTrackWhenGoodLikeItAndClearOfTheFramesObjects() {
        Reidentification reid = new Reidentification(settings(10));
        Track t = remembered(1, box(0, 0, 8, 8));
        reid.lost(t, 5);
        Reidentification.Ghost g = reid.ghosts().iterator().next();
        List<Work> none = List.of();
        assertTrue(reid.found(probe(t, rect(2, 2, 10, 10), new float[] {0.9f, 0.1f}), g, none, MEAN));
        assertFalse(reid.found(probe(t, rect(2, 2, 10, 10), new float[] {0.3f, 0.9f}), g, none, MEAN),
                "appearance below reid-appearance");
        Work weak = probe(t, rect(2, 2, 10, 10), LOOK);
        weak.read = Jobs.read(1, weak.mask, 0.4f);
        assertFalse(reid.found(weak, g, none, MEAN), "predicted IoU below its minimum");
        assertFalse(reid.found(probe(t, rect(0, 0, 0, 0), LOOK), g, none, MEAN), "an empty mask");
        Work live = job(2, track(2, box(6, 2, 14, 10)), rect(6, 2, 14, 10), rect(6, 2, 14, 10), box(6, 2, 14, 10));
        live.good = true;
        assertFalse(reid.found(probe(t, rect(2, 2, 10, 10), LOOK), g, List.of(live), MEAN),
                "half of it is another object's mask");
        Track forgetful = track(3, box(0, 0, 8, 8));
        reid.lost(forgetful, 5);
        Reidentification.Ghost h = new Reidentification.Ghost(forgetful, 5);
        assertFalse(reid.found(probe(forgetful, rect(2, 2, 10, 10), LOOK), h, none, MEAN),
                "no appearance memory to compare with");
    }

    @Test
    void aFoundTrackComesBackAtTheMaskThatLooksMostLikeIt() {
        Reidentification reid = new Reidentification(settings(10));
        Track t = remembered(1, box(0, 0, 8, 8));
        t.bad();
        reid.lost(t, 5);
        Work atLast = probe(t, rect(0, 0, 8, 8), new float[] {0.8f, 0.2f});
        Work searched = probe(t, rect(20, 20, 28, 28), new float[] {1, 0.05f});
        searched.search = true;
        List<Work> kept = new ArrayList<>();
        List<Reidentification.Found> found = reid.reidentify(List.of(atLast, searched), kept, MEAN);
        assertEquals(1, found.size());
        assertSame(searched, found.get(0).probe(), "the search's probe looks more like it");
        assertEquals(5, found.get(0).ghost().lostFrame());
        assertTrue(searched.good);
        assertEquals(List.of(searched), kept);
        assertArrayEquals(new double[] {20, 20, 28, 28}, t.box(), "its box is where it was found");
        assertEquals(0, t.badFrames());
        assertTrue(reid.ghosts().isEmpty(), "no longer lost");
    }

    @Test
    void twoGhostsOnOneMaskAreNotBothFoundAndACoastingProbeThatFindsNothingIsABadFrame() {
        Reidentification reid = new Reidentification(settings(10));
        Track a = remembered(1, box(0, 0, 8, 8));
        Track b = remembered(2, box(0, 0, 8, 8));
        reid.lost(a, 5);
        reid.lost(b, 5);
        List<Work> kept = new ArrayList<>();
        List<Reidentification.Found> found = reid.reidentify(List.of(probe(a, rect(0, 0, 8, 8), LOOK),
                probe(b, rect(0, 0, 8, 8), LOOK)), kept, MEAN);
        assertEquals(List.of(1), found.stream().map(f -> f.probe().id).toList(), "the first takes the mask");
        assertEquals(List.of(b), reid.ghosts().stream().map(Reidentification.Ghost::track).toList());
        Work coasting = probe(b, rect(0, 0, 0, 0), LOOK);
        coasting.predicted = box(2, 0, 10, 8);
        int before = b.badFrames();
        assertTrue(reid.reidentify(List.of(coasting), kept, MEAN).isEmpty());
        assertEquals(before + 1, b.badFrames(), "still behind its occluder: coasts on");
    }
}
