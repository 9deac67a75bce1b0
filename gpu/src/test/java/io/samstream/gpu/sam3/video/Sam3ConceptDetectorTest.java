package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class Sam3ConceptDetectorTest {
    @Test
    void nmsKeepsTheBestOfOverlappingMasksInQueryOrder() {
        Detection a = new Detection(3, 0.9f, new float[4], Masks.logits(16, 0, 0, 8, 8, 1f));
        Detection b = new Detection(5, 0.95f, new float[4], Masks.logits(16, 1, 1, 8, 8, 1f));
        Detection c = new Detection(9, 0.6f, new float[4], Masks.logits(16, 10, 10, 14, 14, 1f));
        List<Detection> kept = Sam3ConceptDetector.suppress(List.of(a, b, c), 0.1f);
        assertEquals(List.of(5, 9), kept.stream().map(Detection::query).toList());
    }

    @Test
    void jointProbabilityIsTheProductBoundedAsInverseSigmoidBoundsIt() {
        assertEquals(0.5f * 0.5f, Sam3ConceptDetector.jointProbability(0f, 0f), 1e-6f);
        // inverse_sigmoid's eps 1e-3 bounds the logit at +-6.9 before the +-10 clamp: 1 / (1 + 1e-3) at the top
        assertEquals(1f / 1.001f, Sam3ConceptDetector.jointProbability(30f, 30f), 1e-6f);
        assertEquals(0.001f / 1.001f, Sam3ConceptDetector.jointProbability(-30f, 0f), 1e-6f);
    }
}
