package io.samstream.gpu.cuda.sam3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.sam2.CudaSam2MaskDecoder;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import io.samstream.gpu.sam3.Sam3Weights;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the CUDA SAM 3 tracker decides before touching a GPU: the configurations its kernels refuse (each problem
 * named, the release and the tests' tiny tracker accepted), the memory it holds and the pool it asks for at the
 * release shapes. Its results against the CPU reference are CudaSam3TrackerGpuTest's.
 */
class CudaSam3TrackerTest {
    /** The release's tracker: grid 72, width 256, memory 64 x 7, 4 attention layers of 2048, decoder MLP 2048. */
    static final Sam3TrackerConfig RELEASE_TRACKER = new Sam3TrackerConfig(1008, 72, 256, 64, 7, 4, 2048, 2048, 256,
            4, 3, 2, 7, 16);

    @Test
    void theReleaseAndTheTinyTrackerAreSupported() {
        assertEquals(List.of(), TrackerSizes.unsupported(RELEASE_TRACKER));
        assertEquals(List.of(), TrackerSizes.unsupported(Sam3Weights.TINY_TRACKER));
    }

    @Test
    void shapesTheKernelsCannotRunAreRefusedNamingWhy() {
        assertProblem(tracker(48, 16, 2048, 4, 3, 7), "mask decoder: hidden width 48");
        assertProblem(tracker(256, 60, 2048, 4, 3, 7), "memory width 60");
        assertProblem(tracker(256, 64, 2044, 4, 3, 7), "feed-forward 2044");
        assertProblem(tracker(256, 24, 2048, 4, 3, 7), "hidden width 256 (a multiple of the memory width 24");
        assertProblem(tracker(512, 64, 2048, 4, 3, 7), "memory attention head dim 512/1");
        assertProblem(tracker(256, 64, 2048, 3, 3, 7), "mask downsampler of 3 stages of 3x3");
        assertProblem(tracker(256, 64, 2048, 4, 5, 7), "mask downsampler of 4 stages of 5x5");
        assertProblem(tracker(256, 64, 2048, 4, 3, 6), "memory fuser kernel 6");

        Sam3TrackerConfig two = tracker(256, 60, 2048, 4, 3, 6);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TrackerSizes.checkSupported(two));
        assertTrue(e.getMessage().startsWith("the CUDA SAM 3 tracker cannot run " + two + ": "), e.getMessage());
        assertTrue(e.getMessage().contains("memory width 60") && e.getMessage().contains("fuser kernel 6"),
                e.getMessage());
    }

    @Test
    void openingRefusesAnUnsupportedShapeBeforeAnyGpuWork() {
        // no GPU is needed to be refused: the check comes first
        StateDict sd = Sam3Weights.videoStateDict(Sam3Weights.TINY, Sam3Weights.TINY_TRACKER);
        Sam3TrackerConfig bad = tracker(256, 64, 2048, 4, 3, 6);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CudaSam3Tracker.open(sd, bad, null, 0));
        assertTrue(e.getMessage().contains("memory fuser kernel 6"), e.getMessage());
    }

    @Test
    void theMemoryHoldsWhatAFrameCanReadAndThePoolHoldsItsParts() {
        // 4 conditioning + 6 tracked memories of 72 x 72 tokens, 4 + 15 pointers of 256 / 64 tokens each
        assertEquals(10 * 5184 + 19 * 4, TrackerSizes.maxMemory(RELEASE_TRACKER));
        long pool = TrackerSizes.poolBytes(RELEASE_TRACKER, 0);
        // the largest parts: the attention's keys, k and v over that memory, the memory and its position uploaded
        long memory = TrackerSizes.maxMemory(RELEASE_TRACKER) * (3L * 64 + 2 * 256) * 2;
        long decoder = CudaSam2MaskDecoder.poolBytes(RELEASE_TRACKER.sam2Parts(), 1);
        assertTrue(pool > memory + decoder + TrackerSizes.SPARE_BYTES, "pool " + pool);
        assertTrue(pool < 600_000_000L, "a few hundred MB at most: " + pool);
    }

    @Test
    void theDefaultBankHoldsItsObjectsMemoriesAndGrowsThePoolByItsSlots() {
        // per object: 4 conditioning memories, the 7 a frame may keep under memory selection, the one being encoded
        assertEquals(4 + 7 + 1, CudaSam3Tracker.slotsPerObject(RELEASE_TRACKER));
        int slots = CudaSam3Tracker.defaultSlots(RELEASE_TRACKER);
        assertEquals(CudaSam3Tracker.DEFAULT_BANK_OBJECTS * 12, slots);
        long slot = 72L * 72 * 64 * 2;   // a memory in bf16
        assertEquals((slots - 1) * slot, TrackerSizes.poolBytes(RELEASE_TRACKER, slots)
                - TrackerSizes.poolBytes(RELEASE_TRACKER, 0), "a bank of none still has one slot's room");
        assertTrue(slots * slot < 600_000_000L, "the default bank: a few hundred MB, " + slots * slot);
    }

    /** The release's tracker with these widths and memory encoder kernels. */
    private static Sam3TrackerConfig tracker(int hidden, int memDim, int ffn, int downLayers, int downKernel,
            int fuserKernel) {
        return new Sam3TrackerConfig(1008, 72, hidden, memDim, 7, 4, ffn, 2048, 256, downLayers, downKernel, 2,
                fuserKernel, 16);
    }

    private static void assertProblem(Sam3TrackerConfig c, String expected) {
        List<String> problems = TrackerSizes.unsupported(c);
        assertEquals(1, problems.size(), c + ": " + problems);
        assertTrue(problems.get(0).contains(expected), c + ": " + problems.get(0));
    }
}
