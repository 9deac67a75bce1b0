package io.samstream.stream.track.kalman;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.EngineSettings;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.kalman.AppearanceTrackingTest.ScriptedBackend;
import io.samstream.stream.track.kalman.AppearanceTrackingTest.Square;
import io.samstream.stream.track.TrackPrompts;
import io.samstream.stream.track.TrackedFrame;
import io.samstream.stream.track.TrackingMeters;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A shaking camera ({@code camera-motion}, {@link CameraMotion}), on a scripted scene ({@link
 * AppearanceTrackingTest}'s kit): a still object on a textured background, the whole image moved by up to two
 * embedding cells (16 px) a frame, each way. The scripted decoder answers the object's mask only for a prompt box
 * centred within 3 low-res cells (6 px) of where the object is, as SAM gives a part or nothing for a box that
 * misses. Following the camera, the tracker keeps the object on every frame; without it, the filter's box lags the
 * shake and the object is lost.
 */
class ShakingCameraTest {
    static final int FRAMES = 30;
    /**
     * The defaults but scene cuts: the scripted texture's 4 x 4-cell regions change their means with every shake,
     * which a real image's layout does not (the tracking benchmark's shaking clips score 0.74 or more).
     */
    static final EngineSettings.Tracking SETTINGS = new EngineSettings.Tracking(true, 5, 0.5, 0.6, 0.85, 30,
            EngineSettings.Tracking.DEFAULT_MIN_APPEARANCE, 0, EngineSettings.Tracking.DEFAULT_REID_WINDOW,
            EngineSettings.Tracking.DEFAULT_REID_APPEARANCE);
    /** The image's offset per frame in embedding cells (consecutive frames at most 3 apart, the matcher's range). */
    static final int[] OX = {0, 2, -1, 1, -2, 0, 2, -1, 1, -1, 2, 0, -2, 1, 0, 2, -1, -2, 1, 0};
    static final int[] OY = {0, -1, 1, 2, 0, -2, 1, -1, 0, 2, -1, 1, 0, -2, 1, 0, -1, 1, 2, -1};
    static final float[][] PALETTE = {AppearanceTrackingTest.look(31), AppearanceTrackingTest.look(32),
        AppearanceTrackingTest.look(33), AppearanceTrackingTest.look(34), AppearanceTrackingTest.look(35)};

    static int ox(int t) {
        return OX[t % OX.length];
    }

    static int oy(int t) {
        return OY[t % OY.length];
    }

    /** The object in low-res cells on frame t (4 low-res cells to an embedding cell). */
    static Square object(int t) {
        return new Square(32 + 4 * ox(t), 32 + 4 * oy(t), 6, AppearanceTrackingTest.OBJECT);
    }

    /** Frame t's embedding [1, C, 16, 16]: a texture of five looks moved with the camera, and the object. */
    static Tensor embed(ScriptedBackend backend, int t) {
        int side = AppearanceTrackingTest.SIDE;
        int channels = AppearanceTrackingTest.CHANNELS;
        float[] v = new float[channels * side * side];
        Square o = object(t);
        for (int cy = 0; cy < side; cy++) {
            for (int cx = 0; cx < side; cx++) {
                int sx = cx - ox(t);
                int sy = cy - oy(t);
                float[] look = o.covers(cx * 4 + 2, cy * 4 + 2) ? o.look()
                        : PALETTE[Math.floorMod(sx * 7 + sy * 13 + sx * sy, PALETTE.length)];
                for (int c = 0; c < channels; c++) {
                    v[c * side * side + cy * side + cx] = look[c];
                }
            }
        }
        Tensor e = new Tensor(v, 1, channels, side, side);
        backend.frameOf.put(e, t);
        return e;
    }

    /** The frames on which object 0 is published. */
    static List<Integer> published(EngineSettings.Tracking settings) {
        ScriptedBackend backend = new ScriptedBackend((t, c) -> {
            Square o = object(t);
            return Math.abs(c[0] - o.cx()) < 3 && Math.abs(c[1] - o.cy()) < 3 ? o : null;
        });
        List<Integer> out = new ArrayList<>();
        try (ObjectTracker tracker = new ObjectTracker("shaking", backend, settings, null, TrackingMeters.none())) {
            TrackPrompts prompts = AppearanceTrackingTest.prompts(new io.samstream.config.PromptSpec.ObjectPrompt(0,
                    null, new double[] {2 * (32 - 6), 2 * (32 - 6), 2 * (32 + 6), 2 * (32 + 6)}));
            for (int t = 0; t < FRAMES; t++) {
                TrackedFrame f = tracker.step(t, MergeRuleTest.SIZE, MergeRuleTest.SIZE, embed(backend, t),
                        prompts);
                if (AppearanceTrackingTest.ids(f).contains(0)) {
                    out.add(t);
                }
            }
        }
        return out;
    }

    @Test
    void theTrackerFollowsTheCameraAndKeepsTheObjectOnEveryFrame() {
        List<Integer> on = published(SETTINGS.withCameraMotion(true));
        assertEquals(FRAMES, on.size(), "published on " + on);
    }

    @Test
    void withoutCameraMotionTheSameShakeLosesIt() {
        List<Integer> off = published(SETTINGS.withCameraMotion(false));
        assertTrue(off.size() < FRAMES / 2, "published on " + off + ": the scene does not test camera motion");
    }
}
