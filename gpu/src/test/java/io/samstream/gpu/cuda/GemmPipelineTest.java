package io.samstream.gpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.samstream.gpu.cuda.CudaKernels.GemmTile;

/** The GEMM pipeline switch and the Hopper tiles' table against the kernels' source (no GPU needed). */
class GemmPipelineTest {
    @AfterEach
    void clear() {
        System.clearProperty(CudaKernels.GEMM_PIPELINE_PROPERTY);
    }

    @Test
    void pipelineIsTmapUnlessAskedFor() {
        assertEquals(6, CudaKernels.gemmPipeline());
        assertEquals("tmap", CudaKernels.gemmPipelineName());
        System.setProperty(CudaKernels.GEMM_PIPELINE_PROPERTY, "v2");
        assertEquals(2, CudaKernels.gemmPipeline());
        System.setProperty(CudaKernels.GEMM_PIPELINE_PROPERTY, "tma");
        assertEquals(3, CudaKernels.gemmPipeline());
        System.setProperty(CudaKernels.GEMM_PIPELINE_PROPERTY, " tma2 ");
        assertEquals(4, CudaKernels.gemmPipeline());
        System.setProperty(CudaKernels.GEMM_PIPELINE_PROPERTY, "tmas");
        assertEquals(5, CudaKernels.gemmPipeline());
        System.setProperty(CudaKernels.GEMM_PIPELINE_PROPERTY, "tmap");
        assertEquals(6, CudaKernels.gemmPipeline());
        System.setProperty(CudaKernels.GEMM_PIPELINE_PROPERTY, "v1");
        assertEquals(1, CudaKernels.gemmPipeline());
    }

    /** Both wgmma attention kernels are on by default; each switch turns only its own kernel off. */
    @Test
    void wgmmaAttentionIsOnUnlessSwitchedOff() {
        try {
            assertTrue(CudaKernels.attentionWgmmaEnabled());
            assertTrue(CudaKernels.windowAttentionWgmmaEnabled());
            System.setProperty(CudaKernels.ATTENTION_WGMMA_PROPERTY, "false");
            assertFalse(CudaKernels.attentionWgmmaEnabled());
            assertTrue(CudaKernels.windowAttentionWgmmaEnabled());
            System.setProperty(CudaKernels.WINDOW_ATTENTION_WGMMA_PROPERTY, "false");
            assertFalse(CudaKernels.windowAttentionWgmmaEnabled());
        } finally {
            System.clearProperty(CudaKernels.ATTENTION_WGMMA_PROPERTY);
            System.clearProperty(CudaKernels.WINDOW_ATTENTION_WGMMA_PROPERTY);
        }
    }

    /** LayerNorm: the kernel holding the fewest 8-column chunks per lane that fit the row (vit_b's 768: three). */
    @Test
    void layerNormKernelIsTheNarrowestThatHoldsTheRow() {
        assertEquals("samstream_layernorm_bf16_v1", CudaKernels.layerNormKernel(8));
        assertEquals("samstream_layernorm_bf16_v1", CudaKernels.layerNormKernel(256));
        assertEquals("samstream_layernorm_bf16_v2", CudaKernels.layerNormKernel(264));
        assertEquals("samstream_layernorm_bf16_v3", CudaKernels.layerNormKernel(768));
        assertEquals("samstream_layernorm_bf16_v5", CudaKernels.layerNormKernel(1280));
        assertEquals("samstream_layernorm_bf16", CudaKernels.layerNormKernel(1288));
        assertEquals("samstream_layernorm_bf16", CudaKernels.layerNormKernel(2048));
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
            int expected = t.symbol.contains("sm90v2") ? 2 : t.symbol.contains("sm90tmac2") ? 4
                    : t.symbol.contains("sm90tmas") ? 5 : t.symbol.contains("sm90tmap") ? 6
                    : t.symbol.contains("sm90tma") ? 3 : 1;
            assertEquals(expected, t.pipeline(), t.toString());
        }
        assertEquals("samstream_gemm_sm90_128x256", GemmTile.H128x256.symbol);
    }

    /** The TMA tiles name their kernels, ask for gemm_sm90_tma::Config::SMEM_BYTES and know their cluster size. */
    @Test
    void tmaTilesMatchTheirKernels() {
        assertEquals("samstream_gemm_sm90tma_128x256", GemmTile.HT128x256.symbol);
        assertEquals("samstream_gemm_sm90tma_128x128", GemmTile.HT128x128.symbol);
        assertEquals("samstream_gemm_sm90tmac2_128x256", GemmTile.HTC128x256.symbol);
        assertEquals("samstream_gemm_sm90tmac2_128x128", GemmTile.HTC128x128.symbol);
        assertEquals(4 * (128 + 256) * 128 + 4 * 16 + 1024, GemmTile.HT128x256.smem);
        assertEquals(6 * (128 + 128) * 128 + 6 * 16 + 1024, GemmTile.HT128x128.smem);
        assertEquals(GemmTile.HT128x256.smem, GemmTile.HTC128x256.smem);
        assertEquals(1, GemmTile.HT128x256.cluster());
        assertEquals(2, GemmTile.HTC128x128.cluster());
        assertTrue(GemmTile.HTC128x256.tma() && GemmTile.HT128x128.tma() && !GemmTile.H2_128x256.tma());
        // TMA stores: Config<BN, STAGES, true>::SMEM_BYTES, which samstream_kernels.cu asserts for both tiles
        assertEquals("samstream_gemm_sm90tmas_128x256", GemmTile.HTS128x256.symbol);
        assertEquals("samstream_gemm_sm90tmas_128x128", GemmTile.HTS128x128.symbol);
        assertEquals(4 * (128 + 256) * 128 + 1024 + 32768 + 1024, GemmTile.HTS128x256.smem);
        assertEquals(6 * (128 + 128) * 128 + 1024 + 32768 + 1024, GemmTile.HTS128x128.smem);
        assertTrue(GemmTile.HTS128x256.tma() && GemmTile.HTS128x256.tmaStore() && !GemmTile.HT128x256.tmaStore());
        assertEquals(1, GemmTile.HTS128x128.cluster());
        // ping-pong consumers: the same ring and staging buffers
        assertEquals("samstream_gemm_sm90tmap_128x128", GemmTile.HTP128x128.symbol);
        assertEquals(GemmTile.HTS128x128.smem, GemmTile.HTP128x128.smem);
        assertTrue(GemmTile.HTP128x128.tma() && GemmTile.HTP128x128.tmaStore());
        assertEquals(1, GemmTile.HTP128x128.cluster());
    }

    /**
     * The TMA tiles map only buffers whose device address is known and 16-byte aligned; others (a pool whose address
     * the driver did not give, an odd offset) make CudaKernels.gemm fall back to the v1 tile of the same width.
     */
    @Test
    void tmaMapsOnlyKnownAlignedAddresses() {
        jcuda.driver.CUdeviceptr base = new jcuda.driver.CUdeviceptr();
        DeviceBuffer pooled = new DeviceBuffer(base, 0x7f0000000000L, 256, 1024, "pooled");
        assertTrue(CudaKernels.tmaCanMap(pooled, pooled, null));
        assertTrue(CudaKernels.tmaCanMap(pooled.slice(16, 64, "16-byte offset")));
        assertFalse(CudaKernels.tmaCanMap(pooled, pooled.slice(8, 64, "8-byte offset")));
        assertFalse(CudaKernels.tmaCanMap(new DeviceBuffer(base, -1, 0, 1024, "address unknown")));
    }

    /** samstream_kernels.cu asserts the TMA-store tiles' shared memory at the numbers GemmTile computes. */
    @Test
    void tmaStoreSharedMemoryIsAssertedInTheSource() throws java.io.IOException {
        String cu = java.nio.file.Files.readString(java.nio.file.Path.of("src/main/cuda/samstream_kernels.cu"));
        assertTrue(cu.contains("Config<256, 4, true>::SMEM_BYTES == " + GemmTile.HTS128x256.smem), "128x256");
        assertTrue(cu.contains("Config<128, 6, true>::SMEM_BYTES == " + GemmTile.HTS128x128.smem), "128x128");
        assertTrue(cu.contains("Config<128, 6, true, true>::SMEM_BYTES == " + GemmTile.HTP128x128.smem), "ping-pong");
    }

    /**
     * Every kernel the Java side launches by name is an entry point of samstream_kernels.cu (else the fatbin lookup
     * fails at start on a GPU, which CI would never see), and the Hopper attention's shared memory matches the
     * number attention_sm90.cuh asserts.
     */
    @Test
    void launchedKernelsAreEntryPointsOfTheSource() throws java.io.IOException {
        String cu = java.nio.file.Files.readString(java.nio.file.Path.of("src/main/cuda/samstream_kernels.cu"));
        for (GemmTile t : GemmTile.values()) {
            assertTrue(cu.contains("(" + t.symbol + ",") || cu.contains(" " + t.symbol + "("), t.symbol);
        }
        for (int c : new int[] {8, 256, 264, 512, 768, 1024, 1280, 1288, 2048}) {
            String ln = CudaKernels.layerNormKernel(c);
            assertTrue(cu.contains("(" + ln + ","), ln);
        }
        assertTrue(cu.contains(" samstream_attention_sm90_hd64("), "samstream_attention_sm90_hd64");
        assertTrue(cu.contains(" samstream_attention_sm90w_hd64("), "samstream_attention_sm90w_hd64");
        String attn = java.nio.file.Files.readString(java.nio.file.Path.of("src/main/cuda/attention_sm90.cuh"));
        assertTrue(attn.contains("static_assert(Config<false>::SMEM_BYTES == " + CudaKernels.ATTN_SM90_SMEM + ","),
                "attention_sm90.cuh asserts another shared-memory size than CudaKernels.ATTN_SM90_SMEM");
        assertTrue(attn.contains("static_assert(Config<true>::SMEM_BYTES == " + CudaKernels.ATTN_SM90W_SMEM + ","),
                "attention_sm90.cuh asserts another shared-memory size than CudaKernels.ATTN_SM90W_SMEM");
    }
}
