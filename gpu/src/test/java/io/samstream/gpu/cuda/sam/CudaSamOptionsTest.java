package io.samstream.gpu.cuda.sam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.CudaSettings;
import io.samstream.config.ModelSparsity;
import org.junit.jupiter.api.Test;

/** The defaults a CUDA backend is made with and what a builder changes (no GPU needed). */
class CudaSamOptionsTest {
    @Test
    void theDefaultsFollowTheLargestBatch() {
        CudaSamOptions o = CudaSamOptions.of(8);
        assertEquals(new CudaSamOptions(8, 1, CudaSamBackend.DEFAULT_MAX_PROMPT_SETS, ModelSparsity.NONE,
                CudaSamBackend.DEFAULT_RING_BATCHES * 8, CudaSettings.DEFAULTS, 0), o);
    }

    @Test
    void aBuilderChangesOnlyWhatItNames() {
        CudaSettings eager = new CudaSettings(false, true);
        CudaSamOptions o = CudaSamOptions.builder(2).maxPromptSets(8).embeddingSlots(3).cuda(eager).device(1).build();
        assertEquals(new CudaSamOptions(2, 1, 8, ModelSparsity.NONE, 3, eager, 1), o);
        assertEquals(CudaSamBackend.DEFAULT_RING_BATCHES * 5, CudaSamOptions.builder(5).decoderThreads(4).build()
                .embeddingSlots());
    }

    @Test
    void missingSettingsAreRefusedByName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CudaSamOptions.builder(1).sparsity(null).build());
        assertTrue(e.getMessage().contains("ModelSparsity.NONE"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CudaSamOptions.builder(1).cuda(null).build());
    }
}
