package io.samstream.gpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.samstream.gpu.cuda.CudaKernels.GemmTile;

/** The GEMM pipeline switch and the v2 tiles' table (no GPU needed). */
class GemmPipelineTest {
    @AfterEach
    void clear() {
        System.clearProperty(CudaKernels.GEMM_PIPELINE_PROPERTY);
    }

    @Test
    void pipelineIsV1UnlessAskedFor() {
        assertEquals(1, CudaKernels.gemmPipeline());
        System.setProperty(CudaKernels.GEMM_PIPELINE_PROPERTY, "v2");
        assertEquals(2, CudaKernels.gemmPipeline());
        System.setProperty(CudaKernels.GEMM_PIPELINE_PROPERTY, "v1");
        assertEquals(1, CudaKernels.gemmPipeline());
    }

    @Test
    void unknownPipelineIsRefusedNamingTheProperty() {
        System.setProperty(CudaKernels.GEMM_PIPELINE_PROPERTY, "v3");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, CudaKernels::gemmPipeline);
        assertTrue(e.getMessage().contains("samstream.cuda.gemmPipeline=v3"), e.getMessage());
    }

    /** The v2 tiles name the v2 kernels and ask for their shared memory (gemm_sm90_v2::Config::SMEM_BYTES). */
    @Test
    void v2TilesMatchTheirKernels() {
        assertEquals("samstream_gemm_sm90v2_128x256", GemmTile.H2_128x256.symbol);
        assertEquals("samstream_gemm_sm90v2_128x128", GemmTile.H2_128x128.symbol);
        assertEquals(4 * (128 + 256) * 128 + 4 * 16 + 1024, GemmTile.H2_128x256.smem);
        assertEquals(7 * (128 + 128) * 128 + 7 * 16 + 1024, GemmTile.H2_128x128.smem);
        assertEquals("samstream_gemm_sm90v2_256x192", GemmTile.H2_256x192.symbol);
        assertEquals(4 * (256 + 192) * 128 + 4 * 16 + 1024, GemmTile.H2_256x192.smem);
        for (GemmTile t : GemmTile.values()) {
            assertTrue(t.smem <= 232448, t + " asks for more shared memory than an sm_90 CTA has");
            assertEquals(t.symbol.contains("sm90v2") ? 2 : 1, t.pipeline(), t.toString());
        }
        assertEquals("samstream_gemm_sm90_128x256", GemmTile.H128x256.symbol);
    }
}
