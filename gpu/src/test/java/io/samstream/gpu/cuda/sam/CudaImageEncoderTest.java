package io.samstream.gpu.cuda.sam;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ModelPrecision;
import io.samstream.gpu.model.RandomSamWeights;
import io.samstream.gpu.model.SamConfig;
import org.junit.jupiter.api.Test;

/** The host-side parts of {@link CudaImageEncoder} that need no GPU. */
class CudaImageEncoderTest {
    static SamConfig vitB() {
        return new SamConfig(1024, 16, 768, 12, 12, 3072, 14, new int[] {2, 5, 8, 11}, 256, 16, 2, 8, 2048, 2, 3, 3, 256);
    }

    @Test
    void supportedShapes() {
        assertDoesNotThrow(() -> CudaImageEncoder.checkSupported(vitB(), 32));
        assertDoesNotThrow(() -> CudaImageEncoder.checkSupported(RandomSamWeights.tinyConfig(), 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CudaImageEncoder.checkSupported(new SamConfig(1024, 16, 768, 12, 16, 3072, 14, new int[] {2}, 256,
                        16, 2, 8, 2048, 2, 3, 3, 256), 1));
        assertTrue(e.getMessage().contains("head dim"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CudaImageEncoder.checkSupported(vitB(), 0));
        // a 2048 px model has a 128 x 128 grid: global attention is limited to 64 x 64
        assertThrows(IllegalArgumentException.class, () -> CudaImageEncoder.checkSupported(new SamConfig(2048, 16, 768,
                12, 12, 3072, 14, new int[] {2}, 256, 16, 2, 8, 2048, 2, 3, 3, 256), 1));
    }

    @Test
    void relPosResizeKeepsMatchingTablesAndInterpolatesOthers() {
        float[] t = {0, 10, 1, 11, 2, 12};   // 3 rows of 2
        assertArrayEquals(t, CudaImageEncoder.resizeLinear(t, 3, 2, 3), 1e-6f);
        float[] up = CudaImageEncoder.resizeLinear(t, 3, 2, 5);
        assertEquals(5 * 2, up.length);
        assertEquals(0f, up[0], 1e-6f);
        assertEquals(2f, up[8], 1e-6f);
    }

    @Test
    void vitBWeightsFitInAFewHundredMegabytes() {
        long bytes = CudaImageEncoder.weightBytes(vitB(), ModelPrecision.BF16);
        // 89.6 M encoder parameters in bf16 (~180 MB) plus alignment
        assertTrue(bytes > 170_000_000L && bytes < 200_000_000L, Long.toString(bytes));
    }

    /**
     * FP8: the blocks' Linears (12 x 7.08 M parameters) take one byte each plus 4 per output channel instead of two,
     * and the activations gain the e4m3 input of the widest Linear (3072 bytes a token) and a scale per token.
     */
    @Test
    void fp8HalvesTheLinearWeightsAndAddsItsActivationBuffers() {
        long linears = 12L * (3 * 768 * 768 + 768 * 768 + 2 * 768 * 3072);
        long saved = CudaImageEncoder.weightBytes(vitB(), ModelPrecision.BF16)
                - CudaImageEncoder.weightBytes(vitB(), ModelPrecision.FP8);
        long scales = 12L * 4 * (3 * 768 + 768 + 3072 + 768);
        assertTrue(Math.abs(saved - (linears - scales)) < 12 * 4 * 512, saved + " vs " + (linears - scales));
        long tokens = 32L * 64 * 64;
        long extra = CudaImageEncoder.activationBytes(vitB(), 32, ModelPrecision.FP8)
                - CudaImageEncoder.activationBytes(vitB(), 32, ModelPrecision.BF16);
        // e4m3 activations, their per-row scales, and lin1's block scales (one per 128 of its 3072 outputs)
        assertEquals(tokens * 3072 + tokens * 4 + tokens * (3072 / 128) * 4, extra);
    }
}
