package io.samstream.gpu.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.CheckpointException;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class SamConfigInferenceTest {
    private static final Path FILE = Path.of("sam_test.pth");

    /** Meta's build_sam_vit_b / _l / _h. */
    static SamConfig vitB() {
        return released(768, 12, 12, new int[] {2, 5, 8, 11});
    }

    static SamConfig vitL() {
        return released(1024, 24, 16, new int[] {5, 11, 17, 23});
    }

    static SamConfig vitH() {
        return released(1280, 32, 16, new int[] {7, 15, 23, 31});
    }

    private static SamConfig released(int dim, int depth, int heads, int[] global) {
        return new SamConfig(1024, 16, dim, depth, heads, 4 * dim, 14, global, 256, 16, 2, 8, 2048, 2, 3, 3, 256);
    }

    @Test
    void tinyModelConfigIsReadBackFromItsWeights() {
        SamConfig tiny = RandomSamWeights.tinyConfig();
        StateDict weights = RandomSamWeights.stateDict(tiny, 3);

        SamConfig inferred = SamConfigInference.infer(weights);

        assertEquals(tiny, inferred);
        assertEquals(64, inferred.imageSize());
        assertEquals(8, inferred.patchSize());
        assertEquals(2, inferred.encoderHeads());
        assertEquals(4, inferred.windowSize());
        assertArrayEquals(new int[] {1, 3}, inferred.globalAttnIndexes());
        assertEquals(8, inferred.maskInChans());
        assertEquals(SamConfigInference.DECODER_HEADS, inferred.decoderHeads());
    }

    @Test
    void releasedModelsAreRecognizedFromShapesAlone() {
        SamConfig b = SamConfigInference.infer(FILE, SamCheckpointSchema.expectedShapes(vitB()));
        assertEquals(vitB(), b);
        assertEquals(768, b.encoderDim());
        assertEquals(12, b.encoderDepth());
        assertEquals(12, b.encoderHeads());
        assertEquals(14, b.windowSize());
        assertArrayEquals(new int[] {2, 5, 8, 11}, b.globalAttnIndexes());

        SamConfig l = SamConfigInference.infer(FILE, SamCheckpointSchema.expectedShapes(vitL()));
        assertEquals(vitL(), l);
        assertEquals(16, l.encoderHeads());
        assertArrayEquals(new int[] {5, 11, 17, 23}, l.globalAttnIndexes());

        SamConfig h = SamConfigInference.infer(FILE, SamCheckpointSchema.expectedShapes(vitH()));
        assertEquals(vitH(), h);
        assertEquals(1280, h.encoderDim());
        assertEquals(32, h.encoderDepth());
        assertEquals(16, h.encoderHeads());
        assertEquals(80, h.encoderHeadDim());
        assertArrayEquals(new int[] {7, 15, 23, 31}, h.globalAttnIndexes());
        for (SamConfig c : new SamConfig[] {b, l, h}) {
            assertEquals(1024, c.imageSize());
            assertEquals(16, c.patchSize());
            assertEquals(256, c.promptDim());
            assertEquals(16, c.maskInChans());
            assertEquals(2, c.decoderDepth());
            assertEquals(2048, c.decoderMlpDim());
            assertEquals(2, c.attentionDownsample());
            assertEquals(3, c.numMultimaskOutputs());
            assertEquals(3, c.iouHeadDepth());
            assertEquals(256, c.iouHeadHiddenDim());
            assertEquals(8, c.decoderHeads());
        }
        assertTrue(h.describe().startsWith("vit_h"));
    }

    @Test
    void unusualButConsistentShapesAreInferred() {
        // all blocks global, 4-layer IoU head, 1 multimask output, downsample 4, 96-wide MLP
        SamConfig odd = new SamConfig(96, 12, 48, 2, 3, 96, 0, new int[] {0, 1}, 64, 12, 3, 8, 80, 4, 1, 4, 40);
        assertEquals(odd, SamConfigInference.infer(RandomSamWeights.stateDict(odd, 5)));
    }

    @Test
    void extraTensorsAreIgnored() {
        Map<String, Tensor> tensors = RandomSamWeights.tensors(RandomSamWeights.tinyConfig(), 1);
        tensors.put("pixel_mean", new Tensor(new float[] {1, 2, 3}, 3, 1, 1));
        assertEquals(RandomSamWeights.tinyConfig(), SamConfigInference.infer(new StateDict(FILE, tensors)));
    }

    @Test
    void missingTensorIsNamedWithItsExpectedShape() {
        Map<String, int[]> shapes = new LinkedHashMap<>(SamCheckpointSchema.expectedShapes(vitB()));
        shapes.remove("image_encoder.blocks.7.mlp.lin2.bias");
        shapes.remove("mask_decoder.no_such_thing");

        assertFails(() -> SamConfigInference.infer(FILE, shapes), "does not match the SAM layout", "vit_b",
                "missing tensor image_encoder.blocks.7.mlp.lin2.bias (expected shape [768])");
    }

    @Test
    void wrongShapeIsNamedWithFoundAndExpectedShapes() {
        Map<String, int[]> shapes = new LinkedHashMap<>(SamCheckpointSchema.expectedShapes(vitB()));
        shapes.put("mask_decoder.transformer.layers.1.norm3.weight", new int[] {255});
        shapes.put("image_encoder.blocks.3.attn.qkv.weight", new int[] {2304, 767});

        assertFails(() -> SamConfigInference.infer(FILE, shapes),
                "tensor image_encoder.blocks.3.attn.qkv.weight has shape [2304, 767] where [2304, 768] was expected",
                "tensor mask_decoder.transformer.layers.1.norm3.weight has shape [255] where [256] was expected");
    }

    @Test
    void manyProblemsAreSummarized() {
        Map<String, int[]> shapes = new LinkedHashMap<>(SamCheckpointSchema.expectedShapes(vitB()));
        shapes.keySet().removeIf(k -> k.startsWith("mask_decoder.output_hypernetworks_mlps."));

        assertFails(() -> SamConfigInference.infer(FILE, shapes), "and 16 more");
    }

    @Test
    void windowSizesThatDisagreeAreReported() {
        Map<String, int[]> shapes = new LinkedHashMap<>(SamCheckpointSchema.expectedShapes(vitB()));
        shapes.put("image_encoder.blocks.4.attn.rel_pos_h", new int[] {13, 64});

        assertFails(() -> SamConfigInference.infer(FILE, shapes), "disagree on the window size",
                "window 7 in blocks [4]", "window 14 in blocks [0, 1, 3, 6, 7, 9, 10]");
    }

    @Test
    void keysTheConfigIsReadFromAreNamedWhenMissing() {
        Map<String, int[]> shapes = new LinkedHashMap<>(SamCheckpointSchema.expectedShapes(vitB()));
        shapes.remove("image_encoder.patch_embed.proj.weight");

        assertFails(() -> SamConfigInference.infer(FILE, shapes),
                "missing tensor image_encoder.patch_embed.proj.weight, which the model configuration is read from");
    }

    @Test
    void somethingOtherThanSamIsRecognized() {
        Map<String, int[]> shapes = new LinkedHashMap<>();
        shapes.put("backbone.conv1.weight", new int[] {64, 3, 7, 7});
        shapes.put("fc.weight", new int[] {1000, 2048});

        assertFails(() -> SamConfigInference.infer(FILE, shapes), "no image_encoder.* tensors",
                "[backbone, fc]", "Segment Anything");
    }

    private static void assertFails(Executable action, String... fragments) {
        CheckpointException e = assertThrows(CheckpointException.class, action);
        assertTrue(e.getMessage().startsWith(FILE + ": "), e.getMessage());
        for (String f : fragments) {
            assertTrue(e.getMessage().contains(f), "message should contain '" + f + "': " + e.getMessage());
        }
    }
}
