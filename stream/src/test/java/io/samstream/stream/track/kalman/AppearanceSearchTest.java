package io.samstream.stream.track.kalman;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.EngineSettings;
import io.samstream.config.TrackingMode;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.DecodeOnlyBackend;
import io.samstream.stream.track.FrameGeometry;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link AppearanceSearch} on a 64 x 64 frame whose embedding has 8 x 8 cells of 8 px: the object's look sits on the
 * 2 x 2 cells at cells (5..6, 5..6) (pixels 40..56), everything else is background.
 */
class AppearanceSearchTest {
    static final SamConfig TINY = new SamConfig(64, 8, 32, 4, 2, 64, 4, new int[] {1, 3}, 32, 8, 2, 8, 64, 2, 3, 3, 32);
    static final FrameGeometry FRAME = new FrameGeometry(64, 64, TINY.imageSize(), TINY.lowResSize());
    static final float[] LOOK = {1, 0};
    static final float[] MEAN = {0, 0};

    static final DecodeOnlyBackend BACKEND = new DecodeOnlyBackend(TINY, "cells") {
        @Override
        public DecoderOutput decode(Tensor embedding, Prompt prompt, boolean multimask) {
            throw new UnsupportedOperationException("the search does not decode");
        }
    };

    /** Channel 0 is 1 on the object's cells, channel 1 a little noise elsewhere. */
    static ImageEmbedding embedding() {
        int e = TINY.embeddingSize();
        float[] v = new float[2 * e * e];
        for (int y = 0; y < e; y++) {
            for (int x = 0; x < e; x++) {
                boolean object = x >= 5 && x <= 6 && y >= 5 && y <= 6;
                v[y * e + x] = object ? 1 : 0;
                v[e * e + y * e + x] = object ? 0 : 0.2f * ((x + y) % 2);
            }
        }
        return ImageEmbedding.of(new Tensor(v, 1, 2, e, e));
    }

    /** reid-search-speed a quarter of the object's size a frame, up to {@code reach} sizes; min-appearance 0.5. */
    static AppearanceSearch search(double reach) {
        return new AppearanceSearch("s", BACKEND, new EngineSettings.Tracking(true, 3, 0.5, 0.6, 0.85, 10, 0.5, 0.4,
                30, 0.8, TrackingMode.KALMAN, false, reach, 0.25));
    }

    /** A lost object last seen at {@code box}, without an appearance memory. */
    static Track track(double[] box) {
        int l = TINY.lowResSize();
        return new Track(1, Track.Origin.PROMPTED, 0, 0, new Tensor(new float[l * l], 1, l, l), box);
    }

    /** A lost 16 x 16 object last seen at (0, 0), with the object's look, {@code since} frames before frame 100. */
    static Reidentification.Ghost ghost(long since) {
        Track t = track(new double[] {0, 0, 16, 16});
        t.remember(LOOK, 256, true);
        return new Reidentification.Ghost(t, 100, 100 - since);
    }

    @Test
    void aLeadIsABoxOfTheObjectsSizeOnTheCellThatLooksMostLikeIt() {
        List<AppearanceSearch.Lead> leads = search(4).search(100, List.of(ghost(40)), embedding(), List.of(), FRAME,
                MEAN);
        assertEquals(1, leads.size());
        // The best 2 x 2 window is centred between cells 5 and 6: the cell before the centre (5) wins ties.
        assertArrayEquals(new double[] {36, 36, 52, 52}, leads.get(0).box());
    }

    @Test
    void noLeadBeyondWhereTheObjectCouldHaveGone() {
        // Cell 5's centre (44, 44) lies 39.6 px from the last box: 2.47 object sizes.
        assertTrue(search(2).search(100, List.of(ghost(40)), embedding(), List.of(), FRAME, MEAN).isEmpty(),
                "reid-search 2 sizes");
        assertTrue(search(4).search(100, List.of(ghost(8)), embedding(), List.of(), FRAME, MEAN).isEmpty(),
                "8 frames at a quarter size a frame: 2 sizes");
        assertEquals(1, search(4).search(100, List.of(ghost(10)), embedding(), List.of(), FRAME, MEAN).size(),
                "10 frames: 2.5 sizes");
    }

    @Test
    void noLeadWhereALiveObjectIsOrWithoutAMemoryOrAnImageToCompareWith() {
        Work live = new Work(2, null, true, null, null, 0, lowRes(36, 36, 56, 56));
        assertTrue(search(4).search(100, List.of(ghost(40)), embedding(), List.of(live), FRAME, MEAN).isEmpty(),
                "a live object's mask covers the place");
        Reidentification.Ghost blank = new Reidentification.Ghost(track(new double[] {0, 0, 16, 16}), 100, 60);
        assertTrue(search(4).search(100, List.of(blank), embedding(), List.of(), FRAME, MEAN).isEmpty(),
                "no appearance memory");
        assertTrue(search(4).search(100, List.of(ghost(40)), embedding(), List.of(), FRAME, null).isEmpty(),
                "no image mean of the frame before");
        assertTrue(search(0).search(100, List.of(ghost(40)), embedding(), List.of(), FRAME, MEAN).isEmpty(),
                "reid-search 0 is off");
    }

    @Test
    void noLeadWhenTheBestCellLiesInTheLastBox() {
        Track t = track(new double[] {32, 32, 64, 64});
        t.remember(LOOK, 256, true);
        assertTrue(search(4).search(100, List.of(new Reidentification.Ghost(t, 100, 60)), embedding(), List.of(),
                FRAME, MEAN).isEmpty(), "the probe at its last box covers it");
    }

    /** Pixels {@code [x0, x1) x [y0, y1)} on the 32 x 32 low-res grid (2 px a cell). */
    static boolean[] lowRes(int x0, int y0, int x1, int y1) {
        int l = TINY.lowResSize();
        boolean[] m = new boolean[l * l];
        for (int y = y0 / 2; y < y1 / 2; y++) {
            for (int x = x0 / 2; x < x1 / 2; x++) {
                m[y * l + x] = true;
            }
        }
        return m;
    }
}
