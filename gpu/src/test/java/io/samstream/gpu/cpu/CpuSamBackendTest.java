package io.samstream.gpu.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.CheckpointException;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class CpuSamBackendTest {
    private static final SamConfig CONFIG = TinySam.config();
    private static final StateDict WEIGHTS = TinySam.weights(CONFIG, 21);

    private static Prompt[] prompts() {
        int l = CONFIG.lowResSize();
        float[] mask = TinySam.random(new Random(22), l * l, 2);
        return new Prompt[] {
            new Prompt(new float[][] {{12, 30}}, new int[] {1}, null, null),
            new Prompt(new float[][] {{12, 30}, {40, 2}}, new int[] {1, 0}, new float[] {5, 6, 33, 40}, null),
            new Prompt(null, null, new float[] {0, 0, 47, 47}, new Tensor(mask, 1, l, l)),
            new Prompt(null, null, null, null),
        };
    }

    private static void assertFinite(float[] a, String what) {
        for (float v : a) {
            assertTrue(Float.isFinite(v), what + " holds " + v);
        }
    }

    @Test
    void encodesAndDecodesWithTheDocumentedShapes() {
        try (CpuSamBackend backend = new CpuSamBackend(WEIGHTS, CONFIG, 2)) {
            assertEquals("cpu fp32 (2 threads)", backend.name());
            Tensor images = TinySam.randomImages(CONFIG, 2, 23);
            Tensor emb = backend.encode(images);
            int e = CONFIG.embeddingSize();
            assertArrayEquals(new int[] {2, CONFIG.promptDim(), e, e}, emb.shape());
            assertFinite(emb.data(), "embedding");
            // The neck ends in a LayerNorm2d: every pixel's channels have the norm's statistics, not all zero.
            assertNotEquals(0.0, Math.abs(emb.data()[0]) + Math.abs(emb.data()[1]));

            // Batched encoding equals one image at a time.
            int per = emb.size() / 2;
            float[] second = Arrays.copyOfRange(images.data(), images.size() / 2, images.size());
            Tensor alone = backend.encode(new Tensor(second, 1, 3, CONFIG.imageSize(), CONFIG.imageSize()));
            assertArrayEquals(Arrays.copyOfRange(emb.data(), per, 2 * per), alone.data());

            Tensor first = new Tensor(Arrays.copyOfRange(emb.data(), 0, per), 1, CONFIG.promptDim(), e, e);
            int l = CONFIG.lowResSize();
            for (Prompt p : prompts()) {
                DecoderOutput multi = backend.decode(first, p, true);
                assertArrayEquals(new int[] {3, l, l}, multi.lowResLogits().shape());
                assertEquals(3, multi.count());
                assertFinite(multi.lowResLogits().data(), "masks");
                assertFinite(multi.iouPredictions(), "iou");
                DecoderOutput single = backend.decode(first, p, false);
                assertArrayEquals(new int[] {1, l, l}, single.lowResLogits().shape());
                assertEquals(1, single.count());
                assertFinite(single.lowResLogits().data(), "mask");
            }
            // Different prompts give different masks.
            DecoderOutput a = backend.decode(first, prompts()[0], true);
            DecoderOutput b = backend.decode(first, prompts()[1], true);
            assertTrue(NaiveOps.maxAbsDiff(a.lowResLogits().data(), b.lowResLogits().data()) > 1e-3);
        }
    }

    @Test
    void resultsDoNotDependOnTheThreadCount() {
        Tensor images = TinySam.randomImages(CONFIG, 1, 24);
        try (CpuSamBackend one = new CpuSamBackend(WEIGHTS, CONFIG, 1);
                CpuSamBackend four = new CpuSamBackend(WEIGHTS, CONFIG, 4)) {
            Tensor e1 = one.encode(images);
            Tensor e4 = four.encode(images);
            assertArrayEquals(e1.data(), e4.data());
            for (Prompt p : prompts()) {
                DecoderOutput d1 = one.decode(e1, p, true);
                DecoderOutput d4 = four.decode(e1, p, true);
                assertArrayEquals(d1.lowResLogits().data(), d4.lowResLogits().data());
                assertArrayEquals(d1.iouPredictions(), d4.iouPredictions());
            }
        }
    }

    @Test
    void rejectsWrongInputs() {
        try (CpuSamBackend backend = new CpuSamBackend(WEIGHTS, CONFIG, 1)) {
            assertThrows(IllegalArgumentException.class, () -> backend.encode(Tensor.zeros(1, 3, 40, 48)));
            assertThrows(IllegalArgumentException.class, () -> backend.decode(Tensor.zeros(1, 31, 6, 6),
                    prompts()[0], true));
        }
        assertThrows(IllegalArgumentException.class, () -> new CpuSamBackend(WEIGHTS, CONFIG, 0));
    }

    @Test
    void wrongCheckpointFailsAtConstructionNamingTheTensor() {
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        for (String k : WEIGHTS.keys()) {
            tensors.put(k, WEIGHTS.get(k));
        }
        tensors.remove("mask_decoder.iou_prediction_head.layers.2.bias");
        CheckpointException missing = assertThrows(CheckpointException.class,
                () -> new CpuSamBackend(new StateDict(WEIGHTS.source(), tensors), CONFIG, 1));
        assertTrue(missing.getMessage().contains("mask_decoder.iou_prediction_head.layers.2.bias"),
                missing.getMessage());

        tensors.put("mask_decoder.iou_prediction_head.layers.2.bias", Tensor.zeros(4));
        tensors.put("image_encoder.blocks.1.mlp.lin1.weight", Tensor.zeros(65, 32));
        CheckpointException shape = assertThrows(CheckpointException.class,
                () -> new CpuSamBackend(new StateDict(WEIGHTS.source(), tensors), CONFIG, 1));
        assertTrue(shape.getMessage().contains("image_encoder.blocks.1.mlp.lin1.weight"), shape.getMessage());
    }
}
