package io.samstream.gpu.cuda.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** How the attention launcher splits the keys of too few query tiles (no GPU needed). */
class Sam2KernelsTest {
    /** An H200 (132 SMs) holding two head-dim-256 attention CTAs per SM. */
    private static final long SLOTS = 264;

    @Test
    void oneObjectsMemoryAttentionFillsOneWave() {
        // 64 query tiles over 28 k keys (898 tiles of 32): 4 splits make 256 CTAs, one wave; 5 would need 1.2 waves
        assertEquals(4, Sam2Kernels.splits(64, 898, SLOTS));
    }

    @Test
    void oneObjectOnTheHopperKernelFillsOneWave() {
        // sdpa_sm90: 32 query tiles of 128 over 449 key tiles of 64, one CTA per SM (132 slots): 4 splits, 128 CTAs
        assertEquals(4, Sam2Kernels.splits(32, 449, 132));
    }

    @Test
    void enoughQueryTilesAreNotSplit() {
        assertEquals(1, Sam2Kernels.splits(512, 898, SLOTS));
        assertEquals(1, Sam2Kernels.splits(264, 898, SLOTS));
    }

    @Test
    void aMostlyEmptySecondWaveIsSplitAway() {
        // 300 CTAs: two waves unsplit (the second 14 % full); in 6 shares 1,800 CTAs fill 7 waves, 1.17 waves' worth
        // of the unsplit time (2 splits: 1.5, 4: 1.25)
        assertEquals(6, Sam2Kernels.splits(300, 898, SLOTS));
    }

    @Test
    void splitsAreBoundedByTheKeysAndTheLimit() {
        assertEquals(2, Sam2Kernels.splits(64, 5, SLOTS));
        assertEquals(1, Sam2Kernels.splits(64, 3, SLOTS));
        assertEquals(Sam2Kernels.MAX_SPLITS, Sam2Kernels.splits(8, 1000, SLOTS));
    }
}
