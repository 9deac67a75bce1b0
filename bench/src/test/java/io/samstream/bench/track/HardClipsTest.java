package io.samstream.bench.track;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.bench.track.Outline.Ellipse;
import io.samstream.bench.track.Outline.Ring;
import io.samstream.bench.track.Outline.Star;
import io.samstream.connectors.video.PatternPainter.Kind;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class HardClipsTest {
    private static int colourAt(byte[] rgb, int pixel) {
        return (rgb[3 * pixel] & 0xFF) << 16 | (rgb[3 * pixel + 1] & 0xFF) << 8 | rgb[3 * pixel + 2] & 0xFF;
    }

    /** The same clip's backgrounds alone: one tiny actor per scene, far outside the frame. */
    private static SceneClip backgroundOf(SceneClip c) {
        List<SceneClip.Actor> far = new ArrayList<>();
        for (int s = 0; s < c.sceneStarts().length; s++) {
            far.add(new SceneClip.Actor(new Ellipse(3, 3), 0, 0, 0, s, new double[] {0, -1000, -1000}));
        }
        return new SceneClip(c.name(), c.family(), c.width(), c.height(), c.frames(), c.fps(), c.seed(), c.shake(),
                c.sceneStarts(), c.textures(), far);
    }

    /** Pairs of objects whose visible pixels are 4-neighbours in frame t. */
    private static boolean touching(ClipTruth truth, int t, int a, int b) {
        for (int y = 0; y < truth.height(); y++) {
            for (int x = 0; x < truth.width(); x++) {
                int l = truth.label(t, x, y);
                if (l != a && l != b) {
                    continue;
                }
                int other = l == a ? b : a;
                if ((x + 1 < truth.width() && truth.label(t, x + 1, y) == other)
                        || (y + 1 < truth.height() && truth.label(t, x, y + 1) == other)) {
                    return true;
                }
            }
        }
        return false;
    }

    @Test
    void everyFamilyHasTwoDeterministicClipsOfTheRightSize() {
        Map<String, List<SceneClip>> families = HardClips.families();
        assertEquals(List.of("shake-contact", "same-colour", "long-occlusion", "leave-return", "scene-cut"),
                List.copyOf(families.keySet()));
        Set<String> names = new HashSet<>();
        Set<Texture> textures = new HashSet<>();
        Set<String> shapes = new HashSet<>();
        for (Map.Entry<String, List<SceneClip>> f : families.entrySet()) {
            assertEquals(2, f.getValue().size(), f.getKey());
            for (SceneClip c : f.getValue()) {
                assertTrue(names.add(c.name()), "clip names are unique: " + c.name());
                assertEquals(f.getKey(), c.family());
                assertEquals(320, c.width());
                assertEquals(240, c.height());
                assertTrue(c.frames() >= 40 && c.frames() <= 90, c.name() + ": " + c.frames() + " frames");
                textures.addAll(List.of(c.textures()));
                c.actors().forEach(a -> shapes.add(a.outline().label().replaceAll("[0-9]", "")));
            }
        }
        assertTrue(textures.containsAll(List.of(Texture.NOISE, Texture.STRIPES, Texture.GRADIENT, Texture.CHECKER)),
                textures.toString());
        assertTrue(shapes.containsAll(List.of("star", "ring", "polygon", "ellipse")), shapes.toString());
        // Same definition, same pixels and truth, frame for frame; another build gives the same again.
        SceneClip a = HardClips.shakeContactStripes();
        SceneClip b = HardClips.shakeContactStripes();
        for (int t = 0; t < a.frames(); t += 13) {
            assertArrayEquals(a.render(t), b.render(t));
            assertArrayEquals(a.truth().labels(t), b.truth().labels(t));
        }
        SceneClip cut = a.firstFrames(9);
        assertArrayEquals(a.render(8), cut.render(8));
        assertThrows(IndexOutOfBoundsException.class, () -> cut.render(9));
        // Another seed, another background.
        SceneClip other = new SceneClip("x", a.family(), a.width(), a.height(), a.frames(), a.fps(), a.seed() + 1,
                a.shake(), a.sceneStarts(), a.textures(), a.actors());
        assertFalse(java.util.Arrays.equals(a.render(0), other.render(0)));
        assertThrows(IllegalArgumentException.class, () -> HardClips.ofFamilies(List.of("no-such")));
        assertEquals(10, HardClips.ofFamilies(List.of(HardClips.ALL)).size());
        assertEquals(List.of("scene-cut-noise-stripes", "scene-cut-checker-gradient"),
                HardClips.ofFamilies(List.of("scene-cut")).stream().map(SceneClip::name).toList());
    }

    @Test
    void theTruthIsWhatIsDrawn() {
        for (SceneClip clip : HardClips.all().values()) {
            ClipTruth truth = clip.truth();
            SceneClip background = backgroundOf(clip);
            for (int t : new int[] {0, clip.frames() / 2, clip.frames() - 1}) {
                byte[] rgb = clip.render(t);
                byte[] bg = background.render(t);
                for (int p = 0; p < clip.width() * clip.height(); p++) {
                    int label = truth.labels(t)[p];
                    int expected = label == ClipTruth.BACKGROUND ? colourAt(bg, p) : clip.actors().get(label).colour();
                    assertEquals(expected, colourAt(rgb, p), clip.name() + " frame " + t + " pixel " + p);
                }
            }
        }
    }

    @Test
    void objectsAreWhereTheirPathsSay() {
        for (SceneClip clip : HardClips.all().values()) {
            ClipTruth truth = clip.truth();
            for (int o = 0; o < truth.objects(); o++) {
                SceneClip.Actor a = clip.actors().get(o);
                for (int t = 0; t < clip.frames(); t += 5) {
                    if (!truth.fullyVisible(o, t)) {
                        continue;
                    }
                    double[] c = clip.centre(o, t);
                    int[] off = clip.cameraOffset(t);
                    double[] scene = a.position(t);
                    assertEquals(scene[0] - off[0], c[0], 1e-9);
                    // The visible mask's box is centred near the path's centre (within the shape's extent).
                    double[] box = truth.box(o, t);
                    assertTrue(box[0] <= c[0] && c[0] <= box[2] && box[1] <= c[1] && c[1] <= box[3],
                            clip.name() + " object " + o + " frame " + t);
                    int cx = (int) Math.floor(c[0]);
                    int cy = (int) Math.floor(c[1]);
                    // A ring's centre is its hole (background); every other outline here covers its centre.
                    int expected = a.outline() instanceof Ring ? ClipTruth.BACKGROUND : o;
                    assertEquals(expected, truth.label(t, cx, cy), clip.name() + " object " + o + " frame " + t);
                }
            }
        }
    }

    @Test
    void shakeContactObjectsReallyTouchWhileTheCameraShakes() {
        for (SceneClip clip : HardClips.families().get("shake-contact")) {
            assertTrue(clip.shake() >= 6, clip.name());
            ClipTruth truth = clip.truth();
            int touching = 0;
            Set<String> offsets = new HashSet<>();
            for (int t = 0; t < clip.frames(); t++) {
                if (touching(truth, t, 0, 1)) {
                    touching++;
                    offsets.add(clip.cameraOffset(t)[0] + "," + clip.cameraOffset(t)[1]);
                }
            }
            assertTrue(touching >= 25, clip.name() + ": objects 0 and 1 touch in " + touching + " frames");
            assertTrue(offsets.size() >= 10, clip.name() + ": the camera moves while they touch: " + offsets.size());
            // Both are prompted: each is whole on some early frame.
            assertEquals(0, truth.firstFullyVisible(0));
            assertEquals(0, truth.firstFullyVisible(1));
        }
        // The ellipse lies over the box's side (it is drawn later): the box is not whole once they touch.
        ClipTruth truth = HardClips.shakeContactNoise().truth();
        for (int t = 10; t < 60; t++) {
            assertFalse(truth.fullyVisible(0, t), "frame " + t);
            assertTrue(touching(truth, t, 0, 1), "frame " + t);
        }
    }

    @Test
    void sameColourObjectsCrossEachOther() {
        for (SceneClip clip : HardClips.families().get("same-colour")) {
            assertEquals(clip.actors().get(0).colour(), clip.actors().get(1).colour(), clip.name());
            ClipTruth truth = clip.truth();
            // Object 0 starts left of object 1 and ends right of it; in between one covers the other.
            assertTrue(clip.centre(0, 0)[0] < clip.centre(1, 0)[0]);
            int last = clip.frames() - 1;
            assertTrue(clip.centre(0, last)[0] > clip.centre(1, last)[0]);
            int covered = 0;
            for (int t = 0; t < clip.frames(); t++) {
                covered += truth.fullyVisible(0, t) ? 0 : 1;
            }
            assertTrue(covered >= 8, clip.name() + ": object 0 partly hidden in " + covered + " frames");
        }
    }

    @Test
    void longOcclusionsLastMoreThanThirtyFrames() {
        for (SceneClip clip : HardClips.families().get("long-occlusion")) {
            ClipTruth truth = clip.truth();
            int longest = 0;
            boolean comesBack = false;
            for (int o = 0; o < truth.objects(); o++) {
                int run = 0;
                for (int t = 0; t < truth.frames(); t++) {
                    boolean hidden = truth.exists(o, t) && truth.inFrameArea(o, t) > 0 && truth.visibleArea(o, t) == 0;
                    if (hidden) {
                        run++;
                        longest = Math.max(longest, run);
                    } else {
                        if (run > 30 && truth.visibleArea(o, t) > 0) {
                            comesBack = true;
                        }
                        run = 0;
                    }
                }
                // Hidden means inside the frame behind others: the whole shape is inside the frame.
            }
            assertTrue(longest > 30, clip.name() + ": longest full occlusion " + longest + " frames");
            assertTrue(comesBack, clip.name() + ": an object comes out after more than 30 hidden frames");
        }
        // The star of the checker clip goes behind the ellipse and stays: an exit "covered".
        List<Exits.Exit> exits = Exits.of(HardClips.longOcclusionChecker().truth());
        assertEquals(List.of(Exits.Cause.COVERED), exits.stream().map(Exits.Exit::cause).toList());
        assertEquals(1, exits.get(0).object());
    }

    @Test
    void objectsLeaveTheFrameAndComeBack() {
        SceneClip noise = HardClips.leaveReturnNoise();
        List<Exits.Exit> exits = Exits.of(noise.truth());
        assertEquals(2, exits.size());
        for (Exits.Exit e : exits) {
            assertEquals(Exits.Cause.LEFT, e.cause());
            assertTrue(e.back() - e.frame() >= 12, e.toString());
        }
        Map<Integer, List<Integer>> again = Exits.reprompts(noise.truth());
        assertEquals(Set.of(0, 1), again.keySet());
        again.forEach((o, frames) -> frames.forEach(f -> assertTrue(noise.truth().fullyVisible(o, f))));
        // Stripes: the ring dips out for fewer frames than an exit needs (no exit, no prompt again); the
        // polygon leaves for good; the diamond comes back.
        SceneClip stripes = HardClips.leaveReturnStripes();
        ClipTruth t = stripes.truth();
        int ringOut = 0;
        for (int f = 0; f < t.frames(); f++) {
            ringOut += t.inFrameArea(0, f) == 0 ? 1 : 0;
        }
        assertTrue(ringOut >= 2 && ringOut < Exits.MIN_ABSENCE, "the ring is out " + ringOut + " frames");
        assertEquals(List.of(new Exits.Exit(1, 27, Exits.Cause.LEFT, -1), new Exits.Exit(2, 11, Exits.Cause.LEFT, 37)),
                Exits.of(t));
        assertEquals(Map.of(2, List.of(43)), Exits.reprompts(t));
    }

    @Test
    void aSceneCutChangesTheBackgroundAndEveryObject() {
        for (SceneClip clip : HardClips.families().get("scene-cut")) {
            int[] starts = clip.sceneStarts();
            assertEquals(2, starts.length);
            int cut = starts[1];
            assertNotEquals(clip.textures()[0], clip.textures()[1]);
            ClipTruth truth = clip.truth();
            Set<Integer> before = new HashSet<>();
            Set<Integer> after = new HashSet<>();
            for (int o = 0; o < truth.objects(); o++) {
                if (truth.exists(o, cut - 1)) {
                    before.add(o);
                    assertTrue(truth.visibleArea(o, cut - 1) > 0, "seen up to the cut");
                }
                if (truth.exists(o, cut)) {
                    after.add(o);
                    assertEquals(cut, truth.firstFullyVisible(o), "new objects are whole from the cut");
                }
                for (int t = 0; t < truth.frames(); t++) {
                    assertEquals(t < cut ? before.contains(o) : after.contains(o), truth.exists(o, t));
                    if (!truth.exists(o, t)) {
                        assertEquals(0, truth.visibleArea(o, t));
                    }
                }
            }
            assertEquals(3, before.size());
            assertEquals(3, after.size());
            assertTrue(java.util.Collections.disjoint(before, after));
            // The background changes almost everywhere (compared at the same camera offset: the backgrounds alone).
            SceneClip bg = backgroundOf(clip);
            byte[] a = bg.render(cut - 1);
            byte[] b = bg.render(cut);
            int same = 0;
            for (int p = 0; p < clip.width() * clip.height(); p++) {
                same += colourAt(a, p) == colourAt(b, p) ? 1 : 0;
            }
            assertTrue(same < clip.width() * clip.height() / 50, clip.name() + ": " + same + " pixels unchanged");
            // Every object before the cut is an exit at the cut.
            List<Exits.Exit> exits = Exits.of(truth);
            assertEquals(before, new HashSet<>(exits.stream().map(Exits.Exit::object).toList()));
            exits.forEach(e -> assertEquals(Exits.Cause.CUT, e.cause()));
            exits.forEach(e -> assertEquals(cut, e.frame()));
            // A new object stands where an old one was at the cut (within 10 px).
            boolean takesAPlace = false;
            for (int o : after) {
                for (int p : before) {
                    double[] n = clip.centre(o, cut);
                    double[] old = clip.actors().get(p).position(cut);
                    int[] off = clip.cameraOffset(cut);
                    takesAPlace |= Math.hypot(n[0] - (old[0] - off[0]), n[1] - (old[1] - off[1])) < 10;
                }
            }
            assertTrue(takesAPlace, clip.name());
        }
    }

    @Test
    void outlinesCoverWhatTheirGeometrySays() {
        Star star = new Star(5, 20, 8);
        assertTrue(star.covers(0, 0));
        assertTrue(star.covers(0, -19.5), "the top tip");
        assertFalse(star.covers(0, 19.5), "opposite the top tip lies a notch");
        assertTrue(star.covers(0, 7.5), "inside the notch radius");
        Ring ring = new Ring(20, 9);
        assertFalse(ring.covers(0, 0));
        assertTrue(ring.covers(14, 0));
        assertFalse(ring.covers(21, 0));
        Ellipse e = new Ellipse(30, 10);
        assertTrue(e.covers(29, 0));
        assertFalse(e.covers(0, 11));
        Outline.Polygon p = Outline.Polygon.irregular(new Random(1), 7, 25, 0.3);
        assertTrue(p.covers(0, 0));
        assertTrue(p.extent() <= 25 && p.extent() >= 25 * 0.7);
        assertFalse(p.covers(26, 0));
        assertEquals(p, p);
        // A turned ellipse in a clip: 45 degrees puts its long axis on the diagonal.
        SceneClip c = new SceneClip("e", "x", 100, 100, 1, 30, 1, 0, new int[] {0}, new Texture[] {Texture.GRADIENT},
                List.of(new SceneClip.Actor(e, 0xFFFFFF, Math.PI / 4, 0, 0, new double[] {0, 50, 50})));
        assertTrue(c.covers(0, 0, 50 + 18, 50 + 18));
        assertFalse(c.covers(0, 0, 50 + 18, 50 - 18));
        assertTrue(new Outline.Pattern(Kind.BOX, 10).covers(9, 6));
    }

    @Test
    void texturesAreTexturedAndSeeded() {
        for (Texture t : Texture.values()) {
            byte[] a = t.paint(64, 48, new Random(3));
            assertArrayEquals(a, t.paint(64, 48, new Random(3)), t.name());
            assertFalse(java.util.Arrays.equals(a, t.paint(64, 48, new Random(4))), t.name());
            Set<Integer> colours = new HashSet<>();
            for (int p = 0; p < 64 * 48; p++) {
                colours.add(colourAt(a, p));
            }
            assertTrue(colours.size() > 100, t.name() + ": " + colours.size() + " colours");
        }
    }
}
