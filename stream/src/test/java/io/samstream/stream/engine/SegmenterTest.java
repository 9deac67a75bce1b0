package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class SegmenterTest {
    @Test
    void stabilityIsTheIouOfTheMaskThresholdedAtPlusAndMinusOne() {
        // > +1: 2 pixels; > -1: 4 pixels.
        assertEquals(0.5f, Segmenter.stabilityScore(new float[] {5, 1.5f, 0.5f, -0.5f, -1f, -3}));
        assertEquals(1f, Segmenter.stabilityScore(new float[] {5, 7, -4}));
        assertEquals(0f, Segmenter.stabilityScore(new float[] {-2, -5}), "empty: 0, not NaN");
    }
}
