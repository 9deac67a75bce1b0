package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AssociationTest {
    static final int N = 32;

    @Test
    void detectionOverlappingATrackMatchesItAndIsNotNew() {
        boolean[] track = Masks.box(N, 4, 4, 12, 12);
        boolean[] det = Masks.box(N, 5, 5, 13, 13);
        Association a = Association.of(packed(det), new float[] {0.9f}, packed(track), 0.1f, 0.5f, 0.7f);
        assertEquals(List.of(), a.newDetections());
        assertEquals(Map.of(0, List.of(0)), a.matches());
        assertEquals(List.of(), a.unmatchedTracks());
    }

    @Test
    void confidentDetectionOverlappingNoTrackIsNew() {
        boolean[] track = Masks.box(N, 0, 0, 8, 8);
        Association a = Association.of(packed(Masks.box(N, 20, 20, 28, 28), Masks.box(N, 20, 0, 28, 8)),
                new float[] {0.9f, 0.69f}, packed(track), 0.1f, 0.5f, 0.7f);
        assertEquals(List.of(0), a.newDetections(), "the second scores under new_det_thresh 0.7");
        assertEquals(List.of(0), a.unmatchedTracks());
    }

    @Test
    void looseOverlapMatchesButLeavesTheTrackUnmatched() {
        // IoU 0.25: at least assoc 0.1 (the detection is not new) but under the track threshold 0.5
        boolean[] track = Masks.box(N, 0, 0, 8, 8);
        boolean[] det = Masks.box(N, 0, 4, 8, 12);
        Association a = Association.of(packed(det), new float[] {0.95f}, packed(track), 0.1f, 0.5f, 0.7f);
        assertEquals(List.of(), a.newDetections());
        assertEquals(List.of(0), a.unmatchedTracks());
        assertEquals(Map.of(), a.highConfidence());
    }

    @Test
    void oneDetectionOverTwoTracksMatchesBothAndEmptyTracksAreSeparate() {
        boolean[] a0 = Masks.box(N, 0, 0, 10, 10);
        boolean[] a1 = Masks.box(N, 1, 1, 10, 10);
        boolean[] empty = new boolean[N * N];
        boolean[] det = Masks.box(N, 0, 0, 10, 10);
        Association a = Association.of(packed(det), new float[] {0.9f}, packed(a0, a1, empty), 0.1f, 0.5f, 0.7f);
        assertEquals(List.of(0, 1), a.matches().get(0));
        assertEquals(List.of(2), a.emptyTracks());
        assertEquals(List.of(), a.unmatchedTracks(), "an empty track is not unmatched");
        assertEquals(Map.of(0, 0), a.highConfidence(), "IoU 1 with track 0, score 0.9");
    }

    @Test
    void withoutTracksEveryDetectionIsNewWhateverItsScore() {
        Association a = Association.of(packed(Masks.box(N, 0, 0, 4, 4)), new float[] {0.55f}, packed(), 0.1f, 0.5f,
                0.7f);
        assertEquals(List.of(0), a.newDetections(), "Meta's early return: all detections are new");
    }

    static List<PackedMask> packed(boolean[]... masks) {
        return java.util.Arrays.stream(masks).map(PackedMask::of).toList();
    }
}
