package io.samstream.stream.track.kalman;

import static io.samstream.stream.track.kalman.Jobs.box;
import static io.samstream.stream.track.kalman.Jobs.job;
import static io.samstream.stream.track.kalman.Jobs.rect;
import static io.samstream.stream.track.kalman.Jobs.track;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link Duplicates}: a new track on an object's mask is merged away; two established ones are never merged. */
class DuplicatesTest {
    static final long FRAME = 10;
    static final Duplicates RULE = new Duplicates("s", 0.8);

    static Work on(int id, Track.Origin origin, long born, boolean[] mask, boolean[] previous) {
        return job(id, track(id, box(8, 8, 20, 20), origin, born), mask, previous, box(8, 8, 20, 20));
    }

    @Test
    void aTrackIsNewForTwoFrames() {
        Track t = track(1, box(0, 0, 4, 4), Track.Origin.DISCOVERED, FRAME);
        assertTrue(Duplicates.isNew(t, FRAME), "seeded this frame");
        assertTrue(Duplicates.isNew(t, FRAME + 1), "discovered the frame before: its first followed frame");
        assertFalse(Duplicates.isNew(t, FRAME + 2));
    }

    @Test
    void aNewTrackOnAnEstablishedObjectsMaskIsMergedIntoIt() {
        Work old = on(1, Track.Origin.PROMPTED, 0, rect(8, 8, 20, 20), rect(8, 8, 20, 20));
        Work dup = on(1000000, Track.Origin.DISCOVERED, FRAME - 1, rect(8, 8, 20, 19), rect(8, 8, 20, 20));
        Set<Work> gone = new HashSet<>();
        Set<Work> jumped = new HashSet<>();
        assertEquals(List.of(dup), RULE.resolve(FRAME, List.of(old, dup), gone, jumped));
        assertEquals(Set.of(dup), gone);
        assertEquals(Set.of(), jumped);
    }

    @Test
    void ofTwoNewTracksThePromptedThenTheOlderThenTheLowerIdStays() {
        boolean[] m = rect(8, 8, 20, 20);
        Work found = on(1000000, Track.Origin.DISCOVERED, FRAME, m, null);
        Work seed = on(7, Track.Origin.PROMPTED, FRAME, m, null);
        assertEquals(List.of(found), RULE.resolve(FRAME, List.of(found, seed), new HashSet<>(), new HashSet<>()));
        Work older = on(5, Track.Origin.PROMPTED, FRAME - 1, m, m);
        Work younger = on(3, Track.Origin.PROMPTED, FRAME, m, null);
        assertEquals(List.of(younger), RULE.resolve(FRAME, List.of(older, younger), new HashSet<>(),
                new HashSet<>()));
        Work low = on(2, Track.Origin.PROMPTED, FRAME, m, null);
        Work high = on(4, Track.Origin.PROMPTED, FRAME, m, null);
        assertEquals(List.of(high), RULE.resolve(FRAME, List.of(high, low), new HashSet<>(), new HashSet<>()));
    }

    @Test
    void twoEstablishedTracksOnOneMaskAreNotMergedTheLessConsistentTakesABadFrame() {
        boolean[] m = rect(8, 8, 20, 20);
        Work stays = on(1, Track.Origin.PROMPTED, 0, m, rect(8, 8, 20, 20));
        Work slid = on(2, Track.Origin.PROMPTED, 0, m, rect(14, 8, 26, 20));
        Set<Work> gone = new HashSet<>();
        Set<Work> jumped = new HashSet<>();
        assertEquals(List.of(), RULE.resolve(FRAME, List.of(slid, stays), gone, jumped));
        assertEquals(Set.of(), gone);
        assertEquals(Set.of(slid), jumped);
    }

    @Test
    void masksBelowTheMergeIouAreTwoObjects() {
        Work old = on(1, Track.Origin.PROMPTED, 0, rect(8, 8, 20, 20), rect(8, 8, 20, 20));
        Work seed = on(2, Track.Origin.PROMPTED, FRAME, rect(8, 8, 20, 17), null); // IoU 0.75
        Set<Work> gone = new HashSet<>();
        assertEquals(List.of(), RULE.resolve(FRAME, List.of(old, seed), gone, new HashSet<>()));
        assertEquals(Set.of(), gone);
    }
}
