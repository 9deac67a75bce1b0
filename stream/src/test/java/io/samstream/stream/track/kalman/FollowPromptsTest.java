package io.samstream.stream.track.kalman;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.FrameGeometry;
import io.samstream.stream.track.TrackPrompts;
import org.junit.jupiter.api.Test;

/**
 * {@link FollowPrompts} on a 64 x 64 frame, model input 64 (one model pixel a pixel) and a 32 x 32 low-res grid
 * (2 px a cell).
 */
class FollowPromptsTest {
    static final FrameGeometry FRAME = new FrameGeometry(64, 64, 64, 32);
    static final int L = 32;

    /** Low-res logits: 10 on cells {@code [x0, x1) x [y0, y1)} less the inner {@code [ix0, ix1) x [iy0, iy1)}. */
    static Tensor logits(int x0, int y0, int x1, int y1, int ix0, int iy0, int ix1, int iy1) {
        float[] v = new float[L * L];
        for (int y = 0; y < L; y++) {
            for (int x = 0; x < L; x++) {
                boolean in = x >= x0 && x < x1 && y >= y0 && y < y1 && !(x >= ix0 && x < ix1 && y >= iy0 && y < iy1);
                v[y * L + x] = in ? 10 : -10;
            }
        }
        return new Tensor(v, 1, L, L);
    }

    static Tensor solid(int x0, int y0, int x1, int y1) {
        return logits(x0, y0, x1, y1, 0, 0, 0, 0);
    }

    @Test
    void aFollowedTrackIsPromptedWhereItsFilterPredictsIt() {
        Track t = new Track(1, Track.Origin.PROMPTED, 3, 0, solid(4, 4, 12, 12), new double[] {8, 8, 24, 24});
        for (int i = 1; i <= 4; i++) { // moving 4 px a frame to the right
            t.filter().predict();
            t.measured(solid(4 + 2 * i, 4, 12 + 2 * i, 12), new double[] {8 + 4 * i, 8, 24 + 4 * i, 24});
        }
        double[] last = t.box();
        Work w = new FollowPrompts(true).follow(t, FRAME);
        double dx = (w.predicted[0] + w.predicted[2] - last[0] - last[2]) / 2;
        assertTrue(dx > 1 && dx < 6, "predicted on along its motion: " + dx);
        assertArrayEquals(FRAME.modelBox(w.predicted), w.prompt.box());
        int cells = (int) Math.round(dx / 2);
        assertArrayEquals(LowResMask.binary(solid(12 + cells, 4, 20 + cells, 12)), w.previous,
                "its last mask moved by the predicted motion");
        assertEquals(1, w.prompt.labels().length);
        assertArrayEquals(FRAME.lowResToModel(15.5 + cells, 7.5), w.prompt.points()[0], "a point at its centroid");
        assertEquals(3, w.revision);
        assertTrue(w.multimask);
    }

    @Test
    void aRingGetsNoCentroidPointAndAPredictionOutOfTheFrameFallsBackToTheLastBox() {
        Track ring = new Track(1, Track.Origin.PROMPTED, 0, 0, logits(4, 4, 16, 16, 7, 7, 13, 13),
                new double[] {8, 8, 32, 32});
        Work w = new FollowPrompts(true).follow(ring, FRAME);
        assertNull(w.prompt.points(), "the centroid lies in the hole");
        Track gone = new Track(2, Track.Origin.PROMPTED, 0, 0, solid(28, 4, 32, 8), new double[] {56, 8, 64, 16});
        for (int i = 1; i <= 3; i++) { // leaving the frame to the right, fast
            gone.filter().predict();
            gone.measured(solid(28, 4, 32, 8), new double[] {56 + 20 * i, 8, 64 + 20 * i, 16});
        }
        Work out = new FollowPrompts(true).follow(gone, FRAME);
        assertTrue(out.predicted[0] > 64, "predicted beyond the frame");
        assertArrayEquals(FRAME.modelBox(gone.box()), out.prompt.box(), "prompted at its last good box");
        Work none = new FollowPrompts(false).follow(new Track(3, Track.Origin.PROMPTED, 0, 0, solid(4, 4, 12, 12),
                new double[] {8, 8, 24, 24}), FRAME);
        assertNull(none.prompt.points(), "centroid points off");
    }

    @Test
    void seedsAndProbes() {
        Work seed = FollowPrompts.seed(new TrackPrompts.Seed(new ObjectPrompt(4, new double[][] {{10, 12}}, null), 2),
                FRAME);
        assertNull(seed.track);
        assertTrue(seed.multimask, "a lone point asks for SAM's three masks");
        assertEquals(2, seed.revision);
        Track t = new Track(1, Track.Origin.PROMPTED, 0, 0, solid(4, 4, 12, 12), new double[] {8, 8, 24, 24});
        Work probe = FollowPrompts.probe(t, new double[] {30, 30, 46, 46}, FRAME);
        assertTrue(probe.probe);
        assertArrayEquals(new float[] {30, 30, 46, 46}, probe.prompt.box());
        assertNull(probe.prompt.maskInput(), "a box alone");
        assertNull(probe.previous);
    }

    @Test
    void theChosenOutputWeighsPredictedIouAndConsistencyWithThePreviousMask() {
        // Three outputs: the previous mask's place (IoU head 0.7), a part of it (0.9), elsewhere (0.95).
        float[] v = new float[3 * L * L];
        System.arraycopy(solid(4, 4, 12, 12).data(), 0, v, 0, L * L);
        System.arraycopy(solid(4, 4, 8, 12).data(), 0, v, L * L, L * L);
        System.arraycopy(solid(20, 20, 28, 28).data(), 0, v, 2 * L * L, L * L);
        DecoderOutput out = new DecoderOutput(new Tensor(v, 3, L, L), new float[] {0.7f, 0.9f, 0.95f});
        Work followed = new Work(1, null, true, null, null, 0, LowResMask.binary(solid(4, 4, 12, 12)));
        FollowPrompts.choose(followed, out);
        assertEquals(0.7f, followed.score, "0.7 + IoU 1 beats 0.9 + IoU 0.5");
        assertArrayEquals(LowResMask.binary(solid(4, 4, 12, 12)), followed.mask);
        Work seed = new Work(2, null, true, null, null, 0, null);
        FollowPrompts.choose(seed, out);
        assertEquals(0.95f, seed.score, "a seed takes the best predicted IoU");
        assertArrayEquals(solid(20, 20, 28, 28).data(), seed.chosen.data());
    }
}
