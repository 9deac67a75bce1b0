package io.samstream.gpu.sparse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ModelSparsity;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.CheckpointWriter;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.model.RandomSamWeights;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SparseEncoderTest {
    private static final ModelSparsity ALL = new ModelSparsity(true, ModelSparsity.Layers.ALL);
    private static final ModelSparsity MLP = new ModelSparsity(true, ModelSparsity.Layers.MLP);

    @TempDir
    Path dir;

    @Test
    void prunesExactlyTheChosenLinearsOfEveryBlock() {
        SamConfig c = RandomSamWeights.tinyConfig();
        StateDict dense = RandomSamWeights.stateDict(c, 4);
        assertSame(dense, SparseEncoder.apply(dense, ModelSparsity.NONE));
        for (ModelSparsity s : new ModelSparsity[] {ALL, MLP}) {
            StateDict pruned = SparseEncoder.apply(dense, s);
            assertEquals(dense.keys(), pruned.keys());
            int count = 0;
            for (String key : dense.keys()) {
                Tensor a = dense.get(key), b = pruned.get(key);
                String module = key.endsWith(".weight") ? key.substring(0, key.length() - 7) : key;
                if (key.endsWith(".weight") && SparseEncoder.isPruned(s, module)) {
                    assertTrue(TwoFourPruning.satisfies(b.data(), b.dim(0), b.dim(1), key), key);
                    assertFalse(TwoFourPruning.satisfies(a.data(), a.dim(0), a.dim(1), key), key + " was dense");
                    count++;
                } else {
                    assertSame(a, b, key + " must be untouched");
                }
            }
            assertEquals(c.encoderDepth() * (s == ALL ? 4 : 2), count, s.describe());
            assertEquals(count, SparseEncoder.prunedLinears(dense, s.layers()).size());
        }
        assertTrue(SparseEncoder.isPruned(MLP, "image_encoder.blocks.0.mlp.lin2"));
        assertFalse(SparseEncoder.isPruned(MLP, "image_encoder.blocks.0.attn.qkv"));
        assertFalse(SparseEncoder.isPruned(ALL, "mask_decoder.transformer.layers.0.mlp.lin1"));
        assertFalse(SparseEncoder.isPruned(ModelSparsity.NONE, "image_encoder.blocks.0.mlp.lin1"));
    }

    @Test
    void aPrunedCheckpointRoundTripsAndIsNotPrunedAgain() {
        SamConfig c = RandomSamWeights.tinyConfig();
        StateDict pruned = SparseEncoder.apply(RandomSamWeights.stateDict(c, 5), ALL);
        Path file = dir.resolve("pruned.pth");   // the loader tells formats apart by content, not by name
        CheckpointWriter.writeSafetensors(pruned, file, "test");
        StateDict back = CheckpointLoader.load(file);
        assertEquals(pruned.keys(), back.keys());
        for (String key : pruned.keys()) {
            assertArrayEquals(pruned.get(key).shape(), back.get(key).shape(), key);
            assertArrayEquals(pruned.get(key).data(), back.get(key).data(), key);
        }
        StateDict again = SparseEncoder.apply(back, ALL);
        for (String key : back.keys()) {
            assertSame(back.get(key), again.get(key), key + ": already 2:4, kept as loaded");
        }
    }

    @Test
    void aCheckpointWithoutEncoderBlocksIsRefused() {
        Map<String, Tensor> t = new LinkedHashMap<>();
        t.put("mask_decoder.x", Tensor.zeros(4));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SparseEncoder.apply(new StateDict(Path.of("x.pth"), t), ALL));
        assertTrue(e.getMessage().contains("image_encoder.blocks"), e.getMessage());
    }
}
