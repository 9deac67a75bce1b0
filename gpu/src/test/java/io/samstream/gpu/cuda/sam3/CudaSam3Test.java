package io.samstream.gpu.cuda.sam3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.sam3.Prompt;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3ConfigInference;
import io.samstream.gpu.sam3.Sam3Shapes;
import io.samstream.gpu.tensor.Tensor;
import org.junit.jupiter.api.Test;

/**
 * What the CUDA SAM 3 backend decides before touching a GPU: the pool it asks for at the release's shapes, the shapes
 * its fusion encoder refuses, and the prompt rows it uploads. The kernels' results are CudaSam3FusionEncoderGpuTest's
 * and CudaSam3VitGpuTest's.
 */
class CudaSam3Test {
    /** The release: ViT 1024 x 32 on 72 x 72 tokens, detector 256; of the text encoder only its context (32) counts. */
    static final Sam3Config RELEASE = new Sam3Config(Sam3ConfigInference.RELEASE_VIT,
            new Sam3Config.Text(49408, 32, 1024, 24, 16, 4096, 512), Sam3ConfigInference.RELEASE_DETECTOR);

    @Test
    void theFusionEncodersPoolHoldsItsWeightsAndActivationsAtTheReleaseShapes() {
        Sam3Config.Detector c = RELEASE.detector();
        int tokens = CudaSam3.tokens(RELEASE), prompt = CudaSam3.maxPromptTokens(RELEASE);
        assertEquals(72 * 72, tokens);
        assertEquals(32 + CudaSam3.MAX_EXEMPLAR_BOXES + 1, prompt);
        // the weights counted from the checkpoint's shapes, independently of the formula: bf16, 2 bytes a value
        long values = Sam3Shapes.fusionShapes(c).values().stream().mapToLong(Tensor::numel).sum();
        assertEquals(6 * (2 * (4 * 256 * 256 + 4 * 256) + 2 * 256 * 2048 + 2048 + 256 + 3 * 2 * 256), values);
        long d = c.dModel(), ffn = c.encoderFfn();
        // image, position, x, normalized x, v, attention output; q+k; the prompt and its k+v; the hidden rows
        long activations = (6 * tokens * d + tokens * 2 * d + prompt * d + prompt * 2 * d + tokens * ffn) * 2;
        long exact = values * 2 + activations;
        long bytes = CudaSam3FusionEncoder.poolBytes(c, tokens, prompt);
        int allocations = 6 * 22 + 10;   // per layer 3 norms x 2, 4 in_proj blocks x 2, 2 out_proj x 2, 2 linears x 2
        assertTrue(bytes >= exact, bytes + " < " + exact);
        assertTrue(bytes <= exact + allocations * 256L, bytes + " more than " + exact + " + alignment");
        assertTrue(bytes > 60_000_000 && bytes < 70_000_000, "19 MB of weights, 43 MB of activations: " + bytes);
    }

    @Test
    void thePoolIsTheTrunksAndTheFusionEncodersAndTheSpare() {
        long total = CudaSam3.poolBytes(RELEASE);
        assertEquals(CudaSam3.trunkBytes(RELEASE.vision()) + CudaSam3FusionEncoder.poolBytes(RELEASE.detector(),
                CudaSam3.tokens(RELEASE), CudaSam3.maxPromptTokens(RELEASE)) + CudaSam3.SPARE_BYTES, total);
        // the trunk's 0.45 G weights (0.9 GB in bf16) dominate
        assertTrue(total > 1_000_000_000L && total < 2_000_000_000L, "pool " + total);
    }

    @Test
    void shapesTheKernelsCannotRunAreRefusedNamingWhy() {
        assertDoesNotThrow(() -> CudaSam3FusionEncoder.checkSupported(RELEASE.detector(), 5184, 97));
        Sam3Config.Detector r = RELEASE.detector();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CudaSam3FusionEncoder
                .checkSupported(new Sam3Config.Detector(252, 6, 6, 2048, 6, 2048, 200, 3, 2048, 7, 3, 2048), 5184, 97));
        assertTrue(e.getMessage().contains("width 252") && e.getMessage().contains("head width 252/6"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CudaSam3FusionEncoder.checkSupported(
                new Sam3Config.Detector(256, 8, 6, 2044, 6, 2048, 200, 3, 2048, 7, 3, 2048), 5184, 97));
        assertTrue(e.getMessage().contains("feed-forward 2044"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CudaSam3FusionEncoder.checkSupported(
                new Sam3Config.Detector(256, 64, 6, 2048, 6, 2048, 200, 3, 2048, 7, 3, 2048), 5184, 97));
        assertTrue(e.getMessage().contains("head width 256/64"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CudaSam3FusionEncoder.checkSupported(r, 0, 97));
        assertTrue(e.getMessage().contains("0 image tokens"), e.getMessage());
    }

    @Test
    void onlyThePromptsValidRowsAreUploadedInOrder() {
        float[] rows = {1, 1, 2, 2, 3, 3, 4, 4};
        Prompt p = new Prompt(rows, new boolean[] {false, true, true, false});
        assertArrayEquals(new float[] {1, 1, 4, 4}, CudaSam3FusionEncoder.validRows(p, 2));
        assertArrayEquals(rows, CudaSam3FusionEncoder.validRows(new Prompt(rows, new boolean[4]), 2));
    }
}
