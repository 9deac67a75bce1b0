package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.samstream.gpu.sam3.FeatureMap;
import java.util.List;
import org.junit.jupiter.api.Test;

class MemoryPickerTest {
    static final int K = 7;

    /** A pointer tagged with its frame, features of 3 floats. */
    static float[] tag(int frame) {
        return new float[] {frame, frame, frame};
    }

    static ObjectMemory tracked(int from, int to, float score) {
        ObjectMemory m = new ObjectMemory(4);
        m.addConditioning(from, FeatureMap.of(tag(from)), tag(from));
        for (int t = from + 1; t <= to; t++) {
            m.addTracked(t, FeatureMap.of(tag(t)), tag(t), score);
        }
        return m;
    }

    @Test
    void selectionSkipsLowScoredFramesButAlwaysReadsThePreviousOne() {
        MemoryPicker p = new MemoryPicker(true, K, 16, 0.01f);
        ObjectMemory m = tracked(0, 9, 0.5f);
        m.tracked(5).selectionScore = 0f;
        m.tracked(9).selectionScore = 0f;
        assertEquals(List.of(1, 2, 3, 4, 6, 7, 8, 9), p.recent(m, 10), "9 is invalid but the previous frame");
        MemoryPicker.Picked picked = p.pick(m, 10);
        // conditioning first (slot 6), then places 6..1 from the end: frames 3, 4, 6, 7, 8, 9 in slots 5..0
        assertEquals(List.of(6, 5, 4, 3, 2, 1, 0), picked.spatial().stream().map(s -> s.slot()).toList());
        assertEquals(List.of(0f, 3f, 4f, 6f, 7f, 8f, 9f),
                picked.spatial().stream().map(s -> s.features().values()[0]).toList());
        // pointers: conditioning at its distance, then ranks 1..7 (the list's first place is never read)
        assertEquals(List.of(10, 1, 2, 3, 4, 5, 6, 7), picked.pointers().stream().map(s -> s.distance()).toList());
        assertEquals(List.of(0f, 9f, 8f, 7f, 6f, 4f, 3f, 2f),
                picked.pointers().stream().map(s -> s.pointer()[0]).toList());
    }

    @Test
    void aConditioningPreviousFrameTakesAPlaceAndReadsNothingThere() {
        MemoryPicker p = new MemoryPicker(true, K, 8, 0.01f);
        ObjectMemory m = tracked(0, 5, 0.5f);
        m.promote(5, null);
        assertEquals(List.of(1, 2, 3, 4, 5), p.recent(m, 6));
        MemoryPicker.Picked picked = p.pick(m, 6);
        assertEquals(List.of(6, 6, 4, 3, 2, 1), picked.spatial().stream().map(s -> s.slot()).toList());
    }

    @Test
    void withoutSelectionTheLastFramesAtTheirDistances() {
        MemoryPicker p = new MemoryPicker(false, K, 16, 0.01f);
        ObjectMemory m = tracked(0, 20, 0f);
        MemoryPicker.Picked picked = p.pick(m, 21);
        assertEquals(List.of(20f, 19f, 18f, 17f, 16f, 15f),
                picked.spatial().stream().skip(1).map(s -> s.features().values()[0]).sorted((a, b) -> Float.compare(b, a))
                        .toList());
        assertEquals(16, picked.pointers().size(), "conditioning + frames 20..6");
    }

    @Test
    void pruningKeepsWhatTheNextFramesReadAndStaysBounded() {
        for (boolean selection : new boolean[] {true, false}) {
            MemoryPicker p = new MemoryPicker(selection, K, 16, 0.01f);
            ObjectMemory m = new ObjectMemory(4);
            m.addConditioning(0, FeatureMap.of(new float[64]), new float[4]);
            long[] held = new long[80];
            for (int t = 1; t < 80; t++) {
                p.pick(m, t); // throws if a feature read was dropped
                m.addTracked(t, FeatureMap.of(new float[64]), new float[4], t % 3 == 0 ? 0f : 0.5f);
                p.prune(m, t);
                held[t] = m.heldFloats();
                // at most 15 selected frames and the latest, 6 + 1 of them with features, and the conditioning one
                org.junit.jupiter.api.Assertions.assertTrue(held[t] <= 64 + 4 + 16 * 4 + 7 * 64, "frame " + t);
                if (t > 40) {
                    assertEquals(held[t - 3], held[t], "selection " + selection + ": periodic scores, periodic size");
                }
            }
            assertEquals(15, m.trackedFrames().size(), "selection " + selection);
            assertNotNull(m.tracked(79).features());
            assertNull(m.trackedFrames().firstEntry().getValue().features());
        }
    }
}
