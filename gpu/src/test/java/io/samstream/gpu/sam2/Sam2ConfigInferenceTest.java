package io.samstream.gpu.sam2;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.CheckpointException;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.testkit.TestModels;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class Sam2ConfigInferenceTest {
    private static final Path FILE = Path.of("sam2.1_test.pt");

    /** Only the tensors inference reads, zero-filled, with the shapes of a model of this trunk. */
    static Map<String, Tensor> shapes(int embed, int[] stages, int window0) {
        Map<String, Tensor> m = new LinkedHashMap<>();
        String t = "image_encoder.trunk.";
        m.put(t + "patch_embed.proj.weight", Tensor.zeros(embed, 3, 7, 7));
        m.put(t + "pos_embed_window", Tensor.zeros(1, embed, window0, window0));
        int block = 0;
        for (int s = 0; s < stages.length; s++) {
            for (int b = 0; b < stages[s]; b++, block++) {
                m.put(t + "blocks." + block + ".norm1.weight", Tensor.zeros(embed << s));
                if (s > 0 && b == 0) {
                    m.put(t + "blocks." + block + ".proj.weight", Tensor.zeros(embed << s, embed << (s - 1)));
                }
            }
        }
        m.put("no_mem_embed", Tensor.zeros(1, 1, 256));
        m.put("maskmem_tpos_enc", Tensor.zeros(7, 1, 1, 64));
        for (int l = 0; l < 4; l++) {
            m.put("memory_attention.layers." + l + ".linear1.weight", Tensor.zeros(2048, 256));
        }
        m.put("sam_mask_decoder.transformer.layers.0.mlp.layers.0.weight", Tensor.zeros(2048, 256));
        m.put("sam_mask_decoder.iou_prediction_head.layers.0.weight", Tensor.zeros(256, 256));
        int in = 1;
        for (int i = 0; i < 4; i++) {
            m.put("memory_encoder.mask_downsampler.encoder." + (3 * i) + ".weight", Tensor.zeros(in * 4, in, 3, 3));
            in *= 4;
        }
        m.put("memory_encoder.mask_downsampler.encoder.12.weight", Tensor.zeros(256, 256, 1, 1));
        for (int l = 0; l < 2; l++) {
            m.put("memory_encoder.fuser.layers." + l + ".dwconv.weight", Tensor.zeros(256, 1, 7, 7));
        }
        return m;
    }

    @Test
    void everyReleaseFromItsShapes() {
        Object[][] releases = {
            {96, new int[] {1, 2, 7, 2}, 8, "hiera_tiny", 1, new int[] {5, 7, 9}, new int[] {8, 4, 14, 7}},
            {96, new int[] {1, 2, 11, 2}, 8, "hiera_small", 1, new int[] {7, 10, 13}, new int[] {8, 4, 14, 7}},
            {112, new int[] {2, 3, 16, 3}, 8, "hiera_base_plus", 2, new int[] {12, 16, 20}, new int[] {8, 4, 14, 7}},
            {144, new int[] {2, 6, 36, 4}, 8, "hiera_large", 2, new int[] {23, 33, 43}, new int[] {8, 4, 16, 8}},
        };
        for (Object[] r : releases) {
            Sam2Config c = Sam2ConfigInference.infer(new StateDict(FILE, shapes((int) r[0], (int[]) r[1], (int) r[2])));
            assertEquals(r[3], c.layout().name());
            assertEquals((int) r[0], c.embedDim());
            assertArrayEquals((int[]) r[1], c.stages());
            assertEquals((int) r[4], c.layout().heads());
            assertArrayEquals((int[]) r[5], c.layout().globalAttBlocks());
            assertArrayEquals((int[]) r[6], c.layout().windowSpec());
            assertEquals(1024, c.imageSize());
            assertEquals(256, c.hidden());
            assertEquals(64, c.memDim());
            assertEquals(7, c.numMaskmem());
            assertEquals(4, c.memAttnLayers());
            assertEquals(2048, c.memAttnFfn());
            assertEquals(2048, c.decoderMlp());
            assertEquals(256, c.iouHidden());
            assertEquals(4, c.downsampleLayers());
            assertEquals(3, c.downsampleKernel());
            assertEquals(2, c.fuserLayers());
            assertEquals(7, c.fuserKernel());
        }
    }

    @Test
    void theTinyFixtureNeedsItsLayoutAndSaysWhy() {
        StateDict sd = CheckpointLoader.load(Sam2ReferenceParityTest.DIR.resolve("checkpoint.pt"));
        assertTrue(Sam2ConfigInference.isSam2(sd));
        CheckpointException e = assertThrows(CheckpointException.class, () -> Sam2ConfigInference.infer(sd));
        assertTrue(e.getMessage().contains("checkpoint.pt"), e.getMessage());
        assertTrue(e.getMessage().contains("Hiera width 8 with stages [1, 2, 2, 1] is none of Meta's SAM 2.1 releases"),
                e.getMessage());
        Sam2Config c = Sam2ConfigInference.infer(sd, Sam2ReferenceParityTest.TINY);
        assertArrayEquals(new int[] {1, 2, 2, 1}, c.stages());
        assertEquals(64, c.hidden());
        assertEquals(32, c.memDim());
        assertEquals(2, c.memAttnLayers());
        assertEquals(128, c.memAttnFfn());
        assertEquals(256, c.decoderMlp());
        assertEquals(64, c.iouHidden());
    }

    @Test
    void theSamV1PathNamesASam2Checkpoint() {
        StateDict sd = CheckpointLoader.load(Sam2ReferenceParityTest.DIR.resolve("checkpoint.pt"));
        CheckpointException e = assertThrows(CheckpointException.class,
                () -> io.samstream.gpu.model.SamConfigInference.infer(sd));
        assertTrue(e.getMessage().contains("checkpoint.pt: is a SAM 2 checkpoint"), e.getMessage());
    }

    @Test
    void aSamV1CheckpointIsNamedAsSuch() {
        StateDict v1 = CheckpointLoader.load(TestModels.tinySam());
        assertFalse(Sam2ConfigInference.isSam2(v1));
        CheckpointException e = assertThrows(CheckpointException.class, () -> Sam2ConfigInference.infer(v1));
        assertTrue(e.getMessage().contains("model.pth"), e.getMessage());
        assertTrue(e.getMessage().contains("is not a SAM 2 checkpoint") && e.getMessage().contains("SAM (v1)"),
                e.getMessage());
    }

    @Test
    void shapesThatDoNotFitAreRefusedWithTheirNames() {
        Map<String, Tensor> three = shapes(96, new int[] {1, 2, 7, 2}, 8);
        three.remove("image_encoder.trunk.blocks.10.proj.weight");
        CheckpointException e = assertThrows(CheckpointException.class,
                () -> Sam2ConfigInference.infer(new StateDict(FILE, three)));
        assertTrue(e.getMessage().startsWith(FILE + ": Hiera has 3 stages [1, 2, 9]"), e.getMessage());

        Map<String, Tensor> window = shapes(96, new int[] {1, 2, 7, 2}, 14);
        e = assertThrows(CheckpointException.class, () -> Sam2ConfigInference.infer(new StateDict(FILE, window)));
        assertTrue(e.getMessage().contains("pos_embed_window has shape [1, 96, 14, 14]"), e.getMessage());

        Map<String, Tensor> patch = shapes(96, new int[] {1, 2, 7, 2}, 8);
        patch.put("image_encoder.trunk.patch_embed.proj.weight", Tensor.zeros(96, 3, 16, 16));
        e = assertThrows(CheckpointException.class, () -> Sam2ConfigInference.infer(new StateDict(FILE, patch)));
        assertTrue(e.getMessage().contains("patch_embed.proj.weight has shape [96, 3, 16, 16]"), e.getMessage());

        Map<String, Tensor> missing = shapes(96, new int[] {1, 2, 7, 2}, 8);
        missing.remove("maskmem_tpos_enc");
        e = assertThrows(CheckpointException.class, () -> Sam2ConfigInference.infer(new StateDict(FILE, missing)));
        assertTrue(e.getMessage().contains("missing key maskmem_tpos_enc"), e.getMessage());
    }

    /**
     * Sam2Shapes.model's tensors are a whole model: its random weights (what the benchmarks and the GPU tests run)
     * read back as the release they were made for, and the CPU model loads them (every tensor there, every shape
     * right).
     */
    @Test
    void randomWeightsAtAReleasesShapesAreAWholeModel() {
        Sam2Config config = Sam2Shapes.release("hiera_tiny");
        StateDict sd = Sam2Shapes.random(Sam2Shapes.model(config), 1);
        Sam2Config read = Sam2ConfigInference.infer(sd);
        assertEquals("hiera_tiny", read.layout().name());
        assertArrayEquals(config.stages(), read.stages());
        assertEquals(config.hidden(), read.hidden());
        assertEquals(config.iouHidden(), read.iouHidden());
        new Sam2Model(sd, read, 1).close();
    }
}
