package io.samstream.gpu.parity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuSamBackend;
import io.samstream.gpu.model.SamConfigInference;
import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The same reference weights written by torch in other forms load to the same model: fp16 .pth,
 * bf16 safetensors with Meta's names, and transformers' {@code SamModel.save_pretrained} layout.
 */
class CheckpointVariantsParityTest {
    private static final Path DIR = SamReferenceParityTest.FIXTURES.resolve("tiny256");
    private static final StateDict FP32 = CheckpointLoader.load(DIR.resolve("model.pth"));

    @Test
    void fp16CheckpointHoldsTheWeightsRoundedToHalf() {
        assertSameWeights(CheckpointLoader.load(DIR.resolve("model-fp16.pth")), 0x1p-11);
    }

    @Test
    void bf16SafetensorsHoldTheWeightsRoundedToBfloat16() {
        assertSameWeights(CheckpointLoader.load(DIR.resolve("model-bf16.safetensors")), 0x1p-8);
    }

    @Test
    void huggingFaceLayoutLoadsToIdenticalWeightsAndMasks() throws Exception {
        StateDict hf = CheckpointLoader.load(DIR.resolve("hf/model.safetensors"));
        assertSameWeights(hf, 0.0);
        assertEquals(SamConfigInference.infer(FP32), SamConfigInference.infer(hf));
        // Identical weights: the full reference case must pass through the HF-named checkpoint too.
        CpuSamBackend backend = new CpuSamBackend(hf, SamConfigInference.infer(hf), 2);
        SamReferenceParityTest.checkCase(backend, DIR.resolve("landscape-shrink"), true);
    }

    /** Every fp32 tensor is present in {@code other} and equal up to the format's relative rounding. */
    private static void assertSameWeights(StateDict other, double relativeRounding) {
        assertEquals(FP32.keys(), other.keys(), "same tensor names");
        for (String key : FP32.keys()) {
            Tensor a = FP32.get(key);
            Tensor b = other.get(key, a.shape());
            for (int i = 0; i < a.size(); i++) {
                float x = a.data()[i];
                float y = b.data()[i];
                double bound = relativeRounding * Math.abs(x) + (relativeRounding == 0 ? 0 : 1e-7);
                assertTrue(Math.abs(x - y) <= bound, () -> key + ": " + x + " loaded as " + y);
            }
        }
    }
}
