package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OcclusionSuppressionTest {
    static final int N = 16;

    @Test
    void theMoreRecentlyOccludedOfTwoOverlappingTracksIsSuppressed() {
        OcclusionSuppression s = new OcclusionSuppression(0.7f);
        float[] empty = Masks.logits(N, 0, 0, 0, 0, 5f);
        // frame 0: A occluded (empty); frame 1: B occluded; frame 2: both on the same region
        s.apply(0, List.of(1L, 2L), new float[][] {empty.clone(), Masks.logits(N, 8, 8, 12, 12, 5f)}, Set.of());
        s.apply(1, List.of(1L, 2L), new float[][] {Masks.logits(N, 0, 0, 4, 4, 5f), empty.clone()}, Set.of());
        float[][] masks = {Masks.logits(N, 2, 2, 10, 10, 5f), Masks.logits(N, 2, 2, 10, 10, 5f)};
        float[] a = masks[0].clone();
        s.apply(2, List.of(1L, 2L), masks, Set.of());
        assertArrayEquals(a, masks[0], "A, occluded longer ago, keeps its mask");
        for (float v : masks[1]) {
            assertTrue(v == OcclusionSuppression.SUPPRESSED_LOGIT);
        }
    }

    @Test
    void twoNeverOccludedTracksAreBothKept() {
        OcclusionSuppression s = new OcclusionSuppression(0.7f);
        float[][] masks = {Masks.logits(N, 2, 2, 10, 10, 5f), Masks.logits(N, 2, 2, 10, 10, 5f)};
        float[][] before = {masks[0].clone(), masks[1].clone()};
        s.apply(0, List.of(1L, 2L), masks, Set.of());
        assertArrayEquals(before[0], masks[0]);
        assertArrayEquals(before[1], masks[1]);
    }
}
