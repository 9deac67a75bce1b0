package io.samstream.gpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.samstream.gpu.cuda.CudaKernels.SparseTile;

/** The 2:4 GEMM pipeline switch and the sparse tiles' table against the kernels' source (no GPU needed). */
class SparsePipelineTest {
    @AfterEach
    void clear() {
        System.clearProperty(CudaKernels.SPARSE_PIPELINE_PROPERTY);
    }

    @Test
    void pipelineIsTmapUnlessAskedFor() {
        assertEquals("tmap", CudaKernels.sparsePipelineName());
        System.setProperty(CudaKernels.SPARSE_PIPELINE_PROPERTY, " tmas ");
        assertEquals("tmas", CudaKernels.sparsePipelineName());
        System.setProperty(CudaKernels.SPARSE_PIPELINE_PROPERTY, "cp");
        assertEquals("cp", CudaKernels.sparsePipelineName());
    }

    @Test
    void unknownPipelineIsRefusedNamingTheProperty() {
        System.setProperty(CudaKernels.SPARSE_PIPELINE_PROPERTY, "tma");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, CudaKernels::sparsePipelineName);
        assertTrue(e.getMessage().contains("samstream.cuda.sparsePipeline=tma"), e.getMessage());
    }

    /** Each tile names an entry point of samstream_kernels.cu, and the TMA tiles ask for what the source asserts. */
    @Test
    void tilesMatchTheirKernels() throws IOException {
        String cu = Files.readString(Path.of("src/main/cuda/samstream_kernels.cu"));
        for (SparseTile t : SparseTile.values()) {
            assertTrue(cu.contains("(" + t.symbol + ",") || cu.contains(" " + t.symbol + "("), t.symbol);
            assertTrue(t.smem <= 232448, t + " asks for more shared memory than an sm_90 CTA has");
        }
        assertEquals("samstream_gemm_sparse_sm90tmas_128x128", SparseTile.HTS128x128.symbol);
        assertEquals("samstream_gemm_sparse_sm90tmap_128x128", SparseTile.HTP128x128.symbol);
        assertTrue(cu.contains("Config<false>::SMEM_BYTES == " + SparseTile.HTS128x128.smem + ","), "cooperative");
        assertTrue(cu.contains("Config<true>::SMEM_BYTES == " + SparseTile.HTP128x128.smem + ","), "ping-pong");
        assertTrue(SparseTile.HTS128x128.tma && SparseTile.HTP128x128.tma);
        assertFalse(SparseTile.H128x128.tma || SparseTile.S128x128.tma);
        assertTrue(SparseTile.HTP128x128.hopper() && !SparseTile.S128x256.hopper());
    }
}
