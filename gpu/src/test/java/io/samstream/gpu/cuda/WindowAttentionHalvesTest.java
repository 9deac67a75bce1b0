package io.samstream.gpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The switch of the windowed wgmma attention's configuration with half a window per CTA and its launch constants
 * against the kernels' source (no GPU needed; the kernel itself: AttentionGpuTest#windowedWgmmaHalves).
 */
class WindowAttentionHalvesTest {
    @AfterEach
    void clear() {
        System.clearProperty(CudaKernels.WINDOW_ATTENTION_HALVES_PROPERTY);
        System.clearProperty(CudaKernels.WINDOW_ATTENTION_WGMMA_PROPERTY);
    }

    /** On by default; the property turns it off, and it leaves the other attention switches alone. */
    @Test
    void onUnlessSwitchedOff() {
        assertEquals("samstream.cuda.windowAttentionHalves", CudaKernels.WINDOW_ATTENTION_HALVES_PROPERTY);
        assertTrue(CudaKernels.windowAttentionHalvesEnabled());
        System.setProperty(CudaKernels.WINDOW_ATTENTION_HALVES_PROPERTY, "false");
        assertFalse(CudaKernels.windowAttentionHalvesEnabled());
        assertTrue(CudaKernels.windowAttentionWgmmaEnabled());
        assertTrue(CudaKernels.attentionWgmmaEnabled());
        System.setProperty(CudaKernels.WINDOW_ATTENTION_HALVES_PROPERTY, "true");
        assertTrue(CudaKernels.windowAttentionHalvesEnabled());
    }

    /**
     * The shared memory CudaKernels asks for is the number samstream_kernels.cu asserts for WindowHalves::SMEM_BYTES,
     * small enough for two CTAs per SM (228 KB, 1 KB of it reserved per CTA), and the kernel is an entry point there.
     */
    @Test
    void sharedMemoryMatchesTheKernelAndFitsTwoCtasPerSm() throws IOException {
        String cu = Files.readString(Path.of("src/main/cuda/samstream_kernels.cu"));
        assertTrue(cu.contains("static_assert(attention_sm90::WindowHalves::SMEM_BYTES == " + CudaKernels.ATTN_SM90W2_SMEM
                + ","), "samstream_kernels.cu asserts another shared-memory size than CudaKernels.ATTN_SM90W2_SMEM");
        assertTrue(cu.contains(" samstream_attention_sm90w2_hd64("), "samstream_attention_sm90w2_hd64 is no entry point");
        assertEquals(111104, CudaKernels.ATTN_SM90W2_SMEM);
        assertTrue(2 * (CudaKernels.ATTN_SM90W2_SMEM + 1024) <= 233472, "two CTAs per SM");
        // 128 query slots per CTA: 1 CTA for windows of 9 to 11, 2 for 12 to 16 (SAM's 14: 196 queries).
        assertEquals(128, CudaKernels.ATTN_SM90W2_QUERIES);
        assertEquals(256, CudaKernels.ATTN_SM90W2_THREADS);
    }
}
