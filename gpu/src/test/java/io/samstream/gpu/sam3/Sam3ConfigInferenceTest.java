package io.samstream.gpu.sam3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.CheckpointException;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class Sam3ConfigInferenceTest {
    @Test
    void tinyShapesGiveBackTheirConfiguration() {
        Sam3Config c = Sam3ConfigInference.infer(Sam3Weights.stateDict(Sam3Weights.TINY));
        Sam3Config t = Sam3Weights.TINY;
        assertEquals(t.text(), c.text());
        assertEquals(t.detector(), c.detector());
        Sam3Config.Vision v = c.vision();
        assertEquals(112, v.imageSize());
        assertEquals(14, v.patchSize());
        assertEquals(8, v.grid());
        assertEquals(48, v.embedDim());
        assertEquals(4, v.depth());
        assertEquals(2, v.heads());
        assertEquals(222, v.mlpHidden());
        assertEquals(4, v.windowSize());
        assertArrayEquals(new int[] {1, 3}, v.globalBlocks());
        assertEquals(4, v.pretrainGrid());
        assertEquals(4, v.levels());
        assertTrue(c.toString().contains("ViT 48 x 4"), c.toString());
    }

    @Test
    void imageModelKeysWithoutThePrefixAreAccepted() {
        StateDict sd = Sam3Weights.stateDict(Sam3Weights.TINY);
        Map<String, Tensor> plain = new LinkedHashMap<>();
        sd.keys().forEach(k -> plain.put(k.substring("detector.".length()), sd.get(k)));
        assertEquals(Sam3ConfigInference.infer(sd).detector(),
                Sam3ConfigInference.infer(new StateDict(sd.source(), plain)).detector());
    }

    @Test
    void otherCheckpointsAreNamed() {
        StateDict sam2 = new StateDict(Path.of("sam2.pt"),
                Map.of("image_encoder.trunk.patch_embed.proj.weight", Tensor.zeros(8, 3, 7, 7)));
        assertFalse(Sam3Checkpoint.isSam3(sam2));
        CheckpointException e = assertThrows(CheckpointException.class, () -> Sam3ConfigInference.infer(sam2));
        assertTrue(e.getMessage().contains("not a SAM 3 checkpoint") && e.getMessage().contains("SAM 2"),
                e.getMessage());
    }

    @Test
    void inconsistentCheckpointsNameTheKey() {
        expectError(m -> m.remove("detector.transformer.decoder.presence_token.weight"),
                "transformer.decoder.presence_token.weight");
        expectError(m -> m.put("detector.backbone.vision_backbone.trunk.blocks.2.mlp.fc1.weight",
                Tensor.zeros(100, 48)), "blocks.2.mlp.fc1.weight");
        expectError(m -> m.put("detector.backbone.vision_backbone.trunk.blocks.1.attn.freqs_cis",
                Tensor.zeros(64, 8, 2)), "blocks.1.attn.freqs_cis");
        expectError(m -> m.put("detector.backbone.vision_backbone.trunk.blocks.0.attn.freqs_cis",
                Tensor.zeros(15, 12, 2)), "not a square");
        expectError(m -> m.put("detector.transformer.decoder.boxRPB_embed_x.layers.1.weight",
                Tensor.zeros(5, 32)), "do not divide the width 32");
        expectError(m -> m.put("detector.backbone.language_backbone.resizer.weight", Tensor.zeros(16, 64)),
                "resizer.weight");
        expectError(m -> m.keySet().removeIf(k -> k.endsWith("freqs_cis")), "without the rotary tables");
        expectError(m -> {
            for (int i = 0; i < 4; i++) {
                m.put("detector.backbone.vision_backbone.trunk.blocks." + i + ".attn.freqs_cis",
                        Tensor.zeros(64, 12, 2));
            }
        }, "windowed blocks are missing");
    }

    private static void expectError(Consumer<Map<String, Tensor>> damage, String expected) {
        StateDict sd = Sam3Weights.stateDict(Sam3Weights.TINY);
        Map<String, Tensor> map = new LinkedHashMap<>();
        sd.keys().forEach(k -> map.put(k, sd.get(k)));
        damage.accept(map);
        CheckpointException e = assertThrows(CheckpointException.class,
                () -> Sam3ConfigInference.infer(new StateDict(sd.source(), map)));
        assertTrue(e.getMessage().contains(expected), "expected '" + expected + "' in: " + e.getMessage());
        assertTrue(e.getMessage().contains("generated-sam3.pt"), e.getMessage());
    }
}
