package io.samstream.gpu.predict;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class StabilityScoreTest {
    @Test
    void isTheRatioOfTheMasksCutAtPlusAndMinusTheOffset() {
        float[] logits = {5, 1.5f, 1f, 0.5f, -0.5f, -1f, -3};
        // > +1: {5, 1.5} = 2 pixels; > -1: {5, 1.5, 1, 0.5, -0.5} = 5 pixels (both cuts strict).
        assertEquals(2f / 5f, StabilityScore.of(logits, 0, logits.length, 1f));
        // A wider offset: > 2: 1 pixel; > -2: 6 pixels.
        assertEquals(1f / 6f, StabilityScore.of(logits, 0, logits.length, 2f));
        assertEquals(1f, StabilityScore.of(new float[] {9, 9, -9}, 0, 3, 1f));
    }

    @Test
    void readsOnlyItsRange() {
        float[] logits = {-9, 5, 0.5f, 9, 9};
        assertEquals(0.5f, StabilityScore.of(logits, 1, 2, 1f));
    }

    @Test
    void emptyMaskScoresZeroNotNaN() {
        assertEquals(0f, StabilityScore.of(new float[] {-2, -5}, 0, 2, 1f));
    }

    @Test
    void badOffsetIsRejected() {
        assertEquals("stability offset must be finite and >= 0, got -1.0", assertThrows(IllegalArgumentException.class,
                () -> StabilityScore.of(new float[1], 0, 1, -1f)).getMessage());
    }
}
