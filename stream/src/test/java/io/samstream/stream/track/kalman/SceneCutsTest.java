package io.samstream.stream.track.kalman;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

/** {@link SceneCuts}: the layout of an image's regions, and a cut when it is unlike the last frame's. */
class SceneCutsTest {
    static final float[] MEAN = {1, 1};

    /** Four regions: two brighter than the mean on channel 0, two darker (or the other way round). */
    static float[] layout(float sign) {
        return SceneCuts.layout(MEAN, List.of(new float[] {1 + sign, 1}, new float[] {1 + sign, 1},
                new float[] {1 - sign, 1}, new float[] {1 - sign, 1}));
    }

    @Test
    void theLayoutIsEachRegionLessTheImageMeanEndToEnd() {
        assertArrayEquals(new float[] {0.5f, 0, 0.5f, 0, -0.5f, 0, -0.5f, 0}, layout(0.5f));
        assertNull(SceneCuts.layout(null, List.of(new float[] {2, 1})), "no image mean");
        assertNull(SceneCuts.layout(MEAN, Arrays.asList(new float[] {2, 1}, null)), "a region missing");
        assertNull(SceneCuts.layout(MEAN, List.of(new float[] {1, 1}, new float[] {1, 1})),
                "a flat image: no region stands out");
    }

    @Test
    void aLayoutUnlikeTheLastFramesIsACut() {
        SceneCuts cuts = new SceneCuts(0.5);
        assertTrue(cuts.cut(layout(0.5f)).isEmpty(), "the first frame has nothing to compare with");
        assertTrue(cuts.cut(layout(0.5f)).isEmpty(), "the same scene");
        assertTrue(cuts.cut(layout(0.4f)).isEmpty(), "the same layout, a little less contrast");
        OptionalDouble cut = cuts.cut(layout(-0.5f));
        assertTrue(cut.isPresent(), "the regions swapped");
        assertEquals(-2 * 0.4 * 0.5 / (0.4 * 0.4 + 0.5 * 0.5), cut.getAsDouble(), 1e-6,
                "compared with the frame just before");
        assertTrue(cuts.cut(layout(-0.5f)).isEmpty(), "the new scene goes on");
    }

    @Test
    void noCutWithoutTwoLayoutsOrWithTheRuleOff() {
        SceneCuts cuts = new SceneCuts(0.5);
        cuts.cut(layout(0.5f));
        assertTrue(cuts.cut(null).isEmpty(), "a flat frame");
        assertTrue(cuts.cut(layout(-0.5f)).isEmpty(), "the frame before had no layout");
        SceneCuts off = new SceneCuts(0);
        off.cut(layout(0.5f));
        assertTrue(off.cut(layout(-0.5f)).isEmpty(), "scene-cut-similarity 0 is off");
    }
}
