package io.samstream.bench.track;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.bench.track.SyntheticClip.Shape;
import io.samstream.connectors.video.PatternPainter.Kind;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class SyntheticClipTest {
    /** The same clip's background alone: its one shape lies far outside the frame. */
    private static SyntheticClip backgroundOf(SyntheticClip c) {
        return new SyntheticClip(c.name(), c.width(), c.height(), c.frames(), c.fps(), c.seed(), c.shake(),
                List.of(new Shape(Kind.DISC, 0, 3, -1000, -1000, 0, 0)));
    }

    private static int colourAt(byte[] rgb, int pixel) {
        return (rgb[3 * pixel] & 0xFF) << 16 | (rgb[3 * pixel + 1] & 0xFF) << 8 | rgb[3 * pixel + 2] & 0xFF;
    }

    @Test
    void theTruthIsWhatIsDrawn() {
        for (SyntheticClip clip : TrackClips.all().values()) {
            ClipTruth truth = clip.truth();
            SyntheticClip background = backgroundOf(clip);
            for (int t : new int[] {0, 13, 24, 35, clip.frames() - 1}) {
                byte[] rgb = clip.render(t);
                byte[] bg = background.render(t);
                for (int y = 0; y < clip.height(); y++) {
                    for (int x = 0; x < clip.width(); x++) {
                        int p = y * clip.width() + x;
                        int label = truth.label(t, x, y);
                        int expected = label == ClipTruth.BACKGROUND ? colourAt(bg, p)
                                : clip.shapes().get(label).colour();
                        assertEquals(expected, colourAt(rgb, p), clip.name() + " frame " + t + " at " + x + "," + y
                                + " (label " + label + ")");
                    }
                }
            }
        }
    }

    @Test
    void sameSeedSamePixelsOtherSeedOtherBackground() {
        SyntheticClip a = TrackClips.cameraShake();
        SyntheticClip b = TrackClips.cameraShake();
        SyntheticClip other = new SyntheticClip("x", a.width(), a.height(), a.frames(), a.fps(), a.seed() + 1, a.shake(),
                a.shapes());
        for (int t = 0; t < a.frames(); t += 11) {
            assertArrayEquals(a.render(t), b.render(t));
            assertFalse(Arrays.equals(a.render(t), other.render(t)));
        }
        SyntheticClip cut = a.firstFrames(5);
        assertEquals(5, cut.frames());
        assertArrayEquals(a.render(4), cut.render(4));
        assertArrayEquals(a.truth().labels(4), cut.truth().labels(4));
        assertThrows(IndexOutOfBoundsException.class, () -> cut.render(5));
    }

    @Test
    void occlusionTruthLeavesOutTheHiddenPart() {
        SyntheticClip clip = TrackClips.occlusion();
        ClipTruth truth = clip.truth();
        // Frame 20: the box (object 1, drawn later) is over the diamond (object 0).
        int t = 20;
        Shape diamond = clip.shapes().get(0);
        double[] c = clip.centre(0, t);
        int geometric = 0;
        int hiddenUnderBox = 0;
        for (int y = 0; y < clip.height(); y++) {
            for (int x = 0; x < clip.width(); x++) {
                if (diamond.kind().covers(diamond.radius(), x + 0.5 - c[0], y + 0.5 - c[1])) {
                    geometric++;
                    int label = truth.label(t, x, y);
                    if (label != 0) {
                        assertEquals(1, label, "a hidden part of the diamond shows the box at " + x + "," + y);
                        hiddenUnderBox++;
                    }
                }
            }
        }
        assertEquals(geometric - hiddenUnderBox, truth.visibleArea(0, t));
        double shown = (double) truth.visibleArea(0, t) / geometric;
        assertTrue(shown > 0.1 && shown < 0.3, "share of the diamond shown at the crossing: " + shown);
        assertFalse(truth.fullyVisible(0, t));
        assertTrue(truth.fullyVisible(1, t), "the box in front is whole");
        // Apart at the start and the end: every object whole.
        for (int o = 0; o < truth.objects(); o++) {
            assertTrue(truth.fullyVisible(o, 0) && truth.fullyVisible(o, clip.frames() - 1), "object " + o);
        }
        // The disc (object 3) covers part of the triangle (object 2) mid-clip.
        assertFalse(truth.fullyVisible(2, 24));
        assertTrue(truth.fullyVisible(3, 24));
    }

    @Test
    void objectsEnterAndLeaveWhenTheClassDocSays() {
        ClipTruth truth = TrackClips.enterLeave().truth();
        assertEquals(14, truth.firstFullyVisible(0), "disc from the left");
        assertEquals(0, truth.visibleArea(0, 0), "the disc starts outside");
        assertEquals(20, truth.firstFullyVisible(2), "diamond from the bottom");
        assertEquals(0, truth.firstFullyVisible(1));
        assertEquals(0, truth.firstFullyVisible(3));
        for (int t = 0; t < truth.frames(); t++) {
            assertEquals(t >= 34, truth.visibleArea(1, t) == 0, "box gone from frame 34, frame " + t);
            assertEquals(t >= 40, truth.visibleArea(3, t) == 0, "triangle gone from frame 40, frame " + t);
        }
        double[] box = truth.box(0, 14);
        assertTrue(box[0] >= 0 && box[2] <= 320 && box[2] - box[0] >= 47 && box[2] - box[0] <= 49,
                Arrays.toString(box));
    }

    @Test
    void stillAndShakyClipsKeepEveryObjectWholeAndTheShakeMovesTheWholeScene() {
        for (SyntheticClip clip : List.of(TrackClips.constantMotion(), TrackClips.cameraShake())) {
            ClipTruth truth = clip.truth();
            for (int o = 0; o < truth.objects(); o++) {
                assertEquals(clip.frames(), truth.longestFullyVisibleRun(o), clip.name() + " object " + o);
            }
        }
        SyntheticClip shaky = TrackClips.cameraShake();
        SyntheticClip background = backgroundOf(shaky);
        int moved = 0;
        for (int t = 1; t < shaky.frames(); t++) {
            int[] o = shaky.cameraOffset(t);
            int[] o0 = shaky.cameraOffset(0);
            assertTrue(Math.abs(o[0]) <= 6 && Math.abs(o[1]) <= 6);
            int dx = o[0] - o0[0];
            int dy = o[1] - o0[1];
            moved += dx != 0 || dy != 0 ? 1 : 0;
            byte[] now = background.render(t);
            byte[] first = background.render(0);
            // The background of frame t is frame 0's, moved by the change of the camera offset.
            for (int y = 13; y < shaky.height() - 13; y += 7) {
                for (int x = 13; x < shaky.width() - 13; x += 7) {
                    assertEquals(colourAt(first, (y + dy) * shaky.width() + x + dx), colourAt(now, y * shaky.width() + x));
                }
            }
            // The shapes move with it.
            Shape s = shaky.shapes().get(0);
            double[] c = shaky.centre(0, t);
            assertEquals(s.x0() + s.vx() * t - o[0], c[0], 1e-9);
        }
        assertTrue(moved > shaky.frames() / 2, "the camera moved in " + moved + " frames");
        int[] still = TrackClips.occlusion().cameraOffset(30);
        assertArrayEquals(new int[] {0, 0}, still);
        assertNotEquals(0, TrackClips.cameraShake().shake());
    }
}
