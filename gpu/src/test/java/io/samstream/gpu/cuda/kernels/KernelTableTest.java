package io.samstream.gpu.cuda.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import io.samstream.gpu.cuda.kernels.GemmKernels.GemmTile;
import io.samstream.gpu.cuda.kernels.SparseGemmKernels.SparseTile;

/**
 * The Java side's table of kernels against the kernels' source (no GPU needed): every kernel launched by name is an
 * entry point of samstream_kernels.cu (else the fatbin lookup fails at start on a GPU, which CI would never see), and
 * the shared memory each launch asks for is the number the source asserts.
 */
class KernelTableTest {
    private static String source(String file) throws IOException {
        return Files.readString(Path.of("src/main/cuda", file));
    }

    private static boolean entryPoint(String cu, String symbol) {
        return cu.contains("(" + symbol + ",") || cu.contains(" " + symbol + "(");
    }

    @Test
    void gemmTilesAreEntryPointsAndAskForWhatTheSourceAsserts() throws IOException {
        String cu = source("samstream_kernels.cu");
        for (GemmTile t : GemmTile.values()) {
            assertTrue(entryPoint(cu, t.symbol), t.symbol);
            assertTrue(t.smem <= 232448, t + " asks for more shared memory than an sm_90 CTA has");
        }
        assertEquals("samstream_gemm_bf16_128x128x64", GemmTile.T128x128x64.symbol);
        assertEquals("samstream_gemm_sm90_128x256", GemmTile.H128x256.symbol);
        assertEquals("samstream_gemm_sm90tmas_128x256", GemmTile.HTS128x256.symbol);
        assertEquals("samstream_gemm_sm90tmas_128x128", GemmTile.HTS128x128.symbol);
        assertEquals("samstream_gemm_sm90tmap_128x128", GemmTile.HTP128x128.symbol);
        assertEquals(4 * (128 + 256) * 128 + 4 * 16 + 1024, GemmTile.H128x256.smem);
        assertEquals(6 * (128 + 128) * 128 + 6 * 16 + 1024, GemmTile.H128x128.smem);
        assertTrue(cu.contains("Config<256, 4, true>::SMEM_BYTES == " + GemmTile.HTS128x256.smem), "128x256");
        assertTrue(cu.contains("Config<128, 6, true>::SMEM_BYTES == " + GemmTile.HTS128x128.smem), "128x128");
        assertTrue(cu.contains("Config<128, 6, true, true>::SMEM_BYTES == " + GemmTile.HTP128x128.smem), "ping-pong");
        assertTrue(GemmTile.HTS128x256.tma() && GemmTile.HTP128x128.tma() && !GemmTile.H128x256.tma());
        assertTrue(GemmTile.H128x128.hopper() && !GemmTile.T128x128x64.hopper());
    }

    @Test
    void hopperSdpaIsAnEntryPointAndAsksForWhatTheSourceAsserts() throws IOException {
        assertTrue(entryPoint(source("samstream_kernels.cu"), Sam2Kernels.SDPA_SM90), Sam2Kernels.SDPA_SM90);
        assertTrue(source("sdpa_sm90.cuh").contains("Config::SMEM_BYTES == " + Sam2Kernels.SDPA_SM90_SMEM + ","),
                "Sam2Kernels.SDPA_SM90_SMEM against sdpa_sm90.cuh");
    }

    @Test
    void sparseTilesAreEntryPointsAndAskForWhatTheSourceAsserts() throws IOException {
        String cu = source("samstream_kernels.cu");
        for (SparseTile t : SparseTile.values()) {
            assertTrue(entryPoint(cu, t.symbol), t.symbol);
            assertTrue(t.smem <= 232448, t + " asks for more shared memory than an sm_90 CTA has");
        }
        assertEquals("samstream_gemm_sparse_sm90tmas_128x128", SparseTile.HTS128x128.symbol);
        assertEquals("samstream_gemm_sparse_sm90tmap_128x128", SparseTile.HTP128x128.symbol);
        assertTrue(cu.contains("Config<false>::SMEM_BYTES == " + SparseTile.HTS128x128.smem + ","), "cooperative");
        assertTrue(cu.contains("Config<true>::SMEM_BYTES == " + SparseTile.HTP128x128.smem + ","), "ping-pong");
        assertTrue(SparseTile.HTS128x128.tma && SparseTile.HTP128x128.tma);
        assertFalse(SparseTile.H128x128.tma || SparseTile.S128x128.tma);
        assertTrue(SparseTile.HTP128x128.hopper() && !SparseTile.S128x128.hopper());
    }

    /** LayerNorm: the kernel holding the fewest 8-column chunks per lane that fit the row (vit_b's 768: three). */
    @Test
    void layerNormKernelIsTheNarrowestThatHoldsTheRow() throws IOException {
        assertEquals("samstream_layernorm_bf16_v1", NormKernels.layerNormKernel(8));
        assertEquals("samstream_layernorm_bf16_v1", NormKernels.layerNormKernel(256));
        assertEquals("samstream_layernorm_bf16_v2", NormKernels.layerNormKernel(264));
        assertEquals("samstream_layernorm_bf16_v3", NormKernels.layerNormKernel(768));
        assertEquals("samstream_layernorm_bf16_v5", NormKernels.layerNormKernel(1280));
        assertEquals("samstream_layernorm_bf16", NormKernels.layerNormKernel(1288));
        assertEquals("samstream_layernorm_bf16", NormKernels.layerNormKernel(2048));
        String cu = source("samstream_kernels.cu");
        for (int c : new int[] {8, 256, 264, 512, 768, 1024, 1280, 1288, 2048}) {
            assertTrue(entryPoint(cu, NormKernels.layerNormKernel(c)), NormKernels.layerNormKernel(c));
        }
    }

    /**
     * The Hopper attention kernels are entry points and ask for the shared memory the source asserts; the windowed
     * one fits two CTAs per SM (228 KB, 1 KB of it reserved per CTA).
     */
    @Test
    void hopperAttentionMatchesTheSource() throws IOException {
        String cu = source("samstream_kernels.cu");
        assertTrue(cu.contains(" samstream_attention_sm90_hd64("), "samstream_attention_sm90_hd64");
        assertTrue(cu.contains(" samstream_attention_sm90w2_hd64("), "samstream_attention_sm90w2_hd64");
        assertTrue(source("attention_sm90.cuh").contains("static_assert(Config::SMEM_BYTES == "
                + AttentionKernels.SM90_SMEM + ","), "attention_sm90.cuh asserts another global shared-memory size");
        assertTrue(cu.contains("static_assert(attention_sm90::WindowHalves::SMEM_BYTES == " + AttentionKernels.SM90W2_SMEM
                + ","), "samstream_kernels.cu asserts another windowed shared-memory size");
        assertEquals(111104, AttentionKernels.SM90W2_SMEM);
        assertTrue(2 * (AttentionKernels.SM90W2_SMEM + 1024) <= 233472, "two CTAs per SM");
        // 128 query slots per CTA: 1 CTA for windows of 9 to 11, 2 for 12 to 16 (SAM's 14: 196 queries).
        assertEquals(128, AttentionKernels.SM90W2_QUERIES);
        assertEquals(256, AttentionKernels.SM90W2_THREADS);
    }

    /** The decoder kernels looked up by name (SAM's and SAM 2's) are entry points. */
    @Test
    void decoderKernelsAreEntryPoints() throws IOException {
        String cu = source("samstream_kernels.cu");
        for (String name : DecoderKernels.NAMES) {
            assertTrue(entryPoint(cu, name), name);
        }
    }

    @Test
    void trackerKernelsAreEntryPoints() throws IOException {
        String cu = source("samstream_kernels.cu");
        assertTrue(entryPoint(cu, AppearanceKernels.POOL), AppearanceKernels.POOL);
        assertTrue(entryPoint(cu, AppearanceKernels.MATCH_SHIFTS), AppearanceKernels.MATCH_SHIFTS);
        assertTrue(entryPoint(cu, AppearanceKernels.CELL_SIMILARITY), AppearanceKernels.CELL_SIMILARITY);
    }
}
