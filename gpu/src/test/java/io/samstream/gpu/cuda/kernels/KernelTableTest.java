package io.samstream.gpu.cuda.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.samstream.gpu.cuda.KernelTable;
import io.samstream.gpu.cuda.kernels.GemmKernels.GemmTile;
import io.samstream.gpu.cuda.kernels.SparseGemmKernels.SparseTile;

/**
 * The Java side's table of kernels (no GPU needed): the shapes the launchers' tiles stand for, and, against the kernel
 * table the build writes from the compiled fatbin ({@link KernelTable}), that every kernel launched by name is an entry
 * point (else the lookup fails at start on a GPU, which CI would never see) and that the shared memory each fixed-size
 * launch asks for is the amount the kernel is built for.
 */
class KernelTableTest {
    @Test
    void gemmTilesAreTheShapesTheirNamesSay() {
        for (GemmTile t : GemmTile.values()) {
            assertTrue(t.smem <= 232448, t + " asks for more shared memory than an sm_90 CTA has");
        }
        assertEquals("samstream_gemm_bf16_128x128x64", GemmTile.T128x128x64.symbol);
        assertEquals("samstream_gemm_sm90_128x256", GemmTile.H128x256.symbol);
        assertEquals("samstream_gemm_sm90tmas_128x256", GemmTile.HTS128x256.symbol);
        assertEquals("samstream_gemm_sm90tmas_128x128", GemmTile.HTS128x128.symbol);
        assertEquals("samstream_gemm_sm90tmap_128x128", GemmTile.HTP128x128.symbol);
        assertEquals(4 * (128 + 256) * 128 + 4 * 16 + 1024, GemmTile.H128x256.smem);
        assertEquals(6 * (128 + 128) * 128 + 6 * 16 + 1024, GemmTile.H128x128.smem);
        assertTrue(GemmTile.HTS128x256.tma() && GemmTile.HTP128x128.tma() && !GemmTile.H128x256.tma());
        assertTrue(GemmTile.H128x128.hopper() && !GemmTile.T128x128x64.hopper());
    }

    @Test
    void gemmTilesAreEntryPointsAndAskForWhatTheyAreBuiltFor() {
        KernelTable table = KernelTable.bundled();
        for (GemmTile t : GemmTile.values()) {
            assertEquals(table.smem(t.symbol), t.smem, t + " against " + t.symbol + "'s shared memory");
        }
    }

    @Test
    void sparseTilesAreTheShapesTheirNamesSay() {
        for (SparseTile t : SparseTile.values()) {
            assertTrue(t.smem <= 232448, t + " asks for more shared memory than an sm_90 CTA has");
        }
        assertEquals("samstream_gemm_sparse_sm90tmas_128x128", SparseTile.HTS128x128.symbol);
        assertEquals("samstream_gemm_sparse_sm90tmap_128x128", SparseTile.HTP128x128.symbol);
        assertTrue(SparseTile.HTS128x128.tma && SparseTile.HTP128x128.tma);
        assertFalse(SparseTile.H128x128.tma || SparseTile.S128x128.tma);
        assertTrue(SparseTile.HTP128x128.hopper() && !SparseTile.S128x128.hopper());
    }

    @Test
    void sparseTilesAreEntryPointsAndAskForWhatTheyAreBuiltFor() {
        KernelTable table = KernelTable.bundled();
        for (SparseTile t : SparseTile.values()) {
            assertEquals(table.smem(t.symbol), t.smem, t + " against " + t.symbol + "'s shared memory");
        }
    }

    @Test
    void fp8TilesAreEntryPointsAndAskForWhatTheBf16TilesDo() {
        KernelTable table = KernelTable.bundled();
        for (Fp8GemmKernels.Fp8Tile t : Fp8GemmKernels.Fp8Tile.values()) {
            assertEquals(table.smem(t.symbol), t.smem, t + " against " + t.symbol + "'s shared memory");
            assertEquals(GemmTile.valueOf(t.name()).smem, t.smem, t + ": the bf16 TMA tile's ring and staging");
        }
        assertEquals("samstream_gemm_e4m3_sm90tmap_128x128", Fp8GemmKernels.Fp8Tile.HTP128x128.symbol);
    }

    /** The block-scaled pair (lin1 e4m3 out, lin2 block-scaled in): entry points with the tile's shared memory. */
    @Test
    void fp8BlockScaledKernelsAreEntryPoints() {
        KernelTable table = KernelTable.bundled();
        for (Fp8GemmKernels.Fp8Tile t : Fp8GemmKernels.Fp8Tile.values()) {
            assertEquals(table.smem(t.e4m3OutSymbol), t.smem, t + " against " + t.e4m3OutSymbol + "'s shared memory");
            if (t == Fp8GemmKernels.blockScaledTile()) {
                assertEquals(table.smem(t.blockInSymbol), t.smem, t + " against " + t.blockInSymbol);
            } else {
                assertEquals(null, t.blockInSymbol, t + ": the block-scaled kernel has one tile");
            }
        }
        assertFalse(table.hasEntry("samstream_gemm_e4m3b_sm90tmap_128x128"), "the losing ping-pong variant is gone");
        assertEquals(128, Fp8GemmKernels.Fp8Tile.valueOf(Fp8GemmKernels.blockScaledTile().name()).bn);
    }

    /** The quantize kernels: the smallest row width that holds c, an entry point for every width the encoders have. */
    @Test
    void fp8QuantizeKernelsAreEntryPoints() {
        KernelTable table = KernelTable.bundled();
        assertEquals("samstream_quantize_e4m3_v3", Fp8GemmKernels.quantizeKernel(768));
        assertEquals("samstream_quantize_e4m3_v12", Fp8GemmKernels.quantizeKernel(3072));
        assertEquals("samstream_quantize_e4m3_v16", Fp8GemmKernels.quantizeKernel(4096));
        assertEquals("samstream_quantize_e4m3_v20", Fp8GemmKernels.quantizeKernel(5120));
        assertEquals(null, Fp8GemmKernels.quantizeKernel(5128));
        assertEquals(null, Fp8GemmKernels.quantizeKernel(12));
        assertEquals("samstream_layernorm_e4m3_v3", Fp8GemmKernels.layerNormKernel(768));
        assertEquals("samstream_layernorm_e4m3_v5", Fp8GemmKernels.layerNormKernel(1280));
        assertEquals(null, Fp8GemmKernels.layerNormKernel(1288));
        for (int c = 8; c <= 5120; c += 8) {
            String q = Fp8GemmKernels.quantizeKernel(c), ln = Fp8GemmKernels.layerNormKernel(c);
            assertTrue(table.hasEntry(q), q);
            assertTrue(ln == null || table.hasEntry(ln), ln);
        }
    }

    /** SAM 2's attention kernels, the Hopper one and one per head-dim ceiling, ask for what they are built for. */
    @Test
    void sdpaKernelsAreEntryPointsAndAskForWhatTheyAreBuiltFor() {
        KernelTable table = KernelTable.bundled();
        assertEquals(table.smem(Sam2Kernels.SDPA_SM90), Sam2Kernels.SDPA_SM90_SMEM, Sam2Kernels.SDPA_SM90);
        for (int hd : Sam2Kernels.SDPA_HEAD_DIMS) {
            String symbol = Sam2Kernels.sdpaSymbol(hd);
            assertEquals(table.smem(symbol), Sam2Kernels.sdpaSmem(hd), symbol);
        }
    }

    /** LayerNorm: the kernel holding the fewest 8-column chunks per lane that fit the row (vit_b's 768: three). */
    @Test
    void layerNormKernelIsTheNarrowestThatHoldsTheRow() {
        assertEquals("samstream_layernorm_bf16_v1", NormKernels.layerNormKernel(8));
        assertEquals("samstream_layernorm_bf16_v1", NormKernels.layerNormKernel(256));
        assertEquals("samstream_layernorm_bf16_v2", NormKernels.layerNormKernel(264));
        assertEquals("samstream_layernorm_bf16_v3", NormKernels.layerNormKernel(768));
        assertEquals("samstream_layernorm_bf16_v5", NormKernels.layerNormKernel(1280));
        assertEquals("samstream_layernorm_bf16", NormKernels.layerNormKernel(1288));
        assertEquals("samstream_layernorm_bf16", NormKernels.layerNormKernel(2048));
    }

    @Test
    void layerNormKernelsAreEntryPoints() {
        KernelTable table = KernelTable.bundled();
        for (int c : new int[] {8, 256, 264, 512, 768, 1024, 1280, 1288, 2048}) {
            assertTrue(table.hasEntry(NormKernels.layerNormKernel(c)), NormKernels.layerNormKernel(c));
        }
    }

    /** The windowed Hopper attention fits two CTAs per SM (228 KB, 1 KB of it reserved per CTA). */
    @Test
    void hopperWindowedAttentionFitsTwoCtasPerSm() {
        assertEquals(111104, AttentionKernels.SM90W2_SMEM);
        assertTrue(2 * (AttentionKernels.SM90W2_SMEM + 1024) <= 233472, "two CTAs per SM");
        // 128 query slots per CTA: 1 CTA for windows of 9 to 11, 2 for 12 to 16 (SAM's 14: 196 queries).
        assertEquals(128, AttentionKernels.SM90W2_QUERIES);
        assertEquals(256, AttentionKernels.SM90W2_THREADS);
    }

    /** The attention kernels are entry points; the Hopper ones ask for the shared memory they are built for. */
    @Test
    void attentionKernelsAreEntryPointsAndAskForWhatTheyAreBuiltFor() {
        KernelTable table = KernelTable.bundled();
        assertEquals(table.smem("samstream_attention_sm90_hd64"), AttentionKernels.SM90_SMEM, "global");
        assertEquals(table.smem("samstream_attention_sm90w2_hd64"), AttentionKernels.SM90W2_SMEM, "windowed");
        for (int hd : AttentionKernels.HEAD_DIMS) {
            assertTrue(table.hasEntry(AttentionKernels.symbol(hd, true)), AttentionKernels.symbol(hd, true));
            assertTrue(table.hasEntry(AttentionKernels.symbol(hd, false)), AttentionKernels.symbol(hd, false));
        }
    }

    /** The decoder kernels looked up by name (SAM's and SAM 2's) are entry points. */
    @Test
    void decoderKernelsAreEntryPoints() {
        KernelTable table = KernelTable.bundled();
        for (String name : DecoderKernels.NAMES) {
            assertTrue(table.hasEntry(name), name);
        }
    }

    /** The pre- and post-processing kernels (SAM's and SAM 3's input, the masks, YUV frames) are entry points. */
    @Test
    void imageOpsKernelsAreEntryPoints() {
        KernelTable table = KernelTable.bundled();
        for (String name : new String[] {ImageOpsKernels.PILLOW_PASS, ImageOpsKernels.PILLOW_PASS_NORMALIZE,
            ImageOpsKernels.PILLOW_PASS_SCALE_NORMALIZE, ImageOpsKernels.MASK_POSTPROCESS, ImageOpsKernels.YUV_TO_RGB}) {
            assertTrue(table.hasEntry(name), name);
        }
    }

    @Test
    void trackerKernelsAreEntryPoints() {
        KernelTable table = KernelTable.bundled();
        assertTrue(table.hasEntry(AppearanceKernels.POOL), AppearanceKernels.POOL);
        assertTrue(table.hasEntry(AppearanceKernels.MATCH_SHIFTS), AppearanceKernels.MATCH_SHIFTS);
        assertTrue(table.hasEntry(AppearanceKernels.CELL_SIMILARITY), AppearanceKernels.CELL_SIMILARITY);
    }
}
