package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class MaskOverlapsTest {
    static final int N = 16;

    @Test
    void aMaskMostlyUnderAStrongerOneIsSuppressedWhole() {
        float[] big = Masks.logits(N, 0, 0, 12, 12, 8f);
        float[] small = Masks.logits(N, 2, 2, 13, 13, 2f); // 121 px, 21 outside the big one
        float[][] out = MaskOverlaps.suppressShrunk(new float[][] {big, small});
        assertEquals(144, MaskOverlaps.area(MaskOverlaps.binary(out[0])));
        assertEquals(0, MaskOverlaps.area(MaskOverlaps.binary(out[1])), "keeps 21/121 < 30 %");
    }

    @Test
    void aMaskKeepingMostOfItsAreaIsLeftOverlapping() {
        float[] a = Masks.logits(N, 0, 0, 8, 8, 8f);
        float[] b = Masks.logits(N, 6, 6, 14, 14, 2f);
        float[][] out = MaskOverlaps.suppressShrunk(new float[][] {a, b});
        assertEquals(64, MaskOverlaps.area(MaskOverlaps.binary(out[1])), "unchanged, overlap included");
    }

    @Test
    void publishedMasksAreDisjointTheHigherScoreTakingSharedPixels() {
        boolean[] a = Masks.box(N, 0, 0, 8, 8);
        boolean[] b = Masks.box(N, 4, 4, 12, 12);
        boolean[][] out = MaskOverlaps.objectWise(new boolean[][] {a, b}, new float[] {0.6f, 0.9f});
        assertFalse(out[0][5 * N + 5]);
        assertTrue(out[1][5 * N + 5]);
        assertTrue(out[0][N + 1]);
        assertEquals(64 - 16, MaskOverlaps.area(out[0]));
        assertEquals(64, MaskOverlaps.area(out[1]));
    }
}
