package io.samstream.bench.track;

import io.samstream.bench.track.Outline.Ellipse;
import io.samstream.bench.track.Outline.Pattern;
import io.samstream.bench.track.Outline.Polygon;
import io.samstream.bench.track.Outline.Ring;
import io.samstream.bench.track.Outline.Star;
import io.samstream.connectors.video.PatternPainter;
import io.samstream.connectors.video.PatternPainter.Kind;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The harder families of the tracking benchmark (issue #15, item 4): clips made to break a tracker that does
 * well on {@link TrackClips}. 320x240 at 30 fps like those, 60-90 frames, two clips per family that differ in
 * background texture ({@link Texture}) and shapes ({@link Outline}: the test pattern's kinds and also
 * ellipses turned at an angle, stars, rings, irregular polygons). Paths are written out by hand (keyframes:
 * frame, x, y); seeds pick textures, camera shake and the polygons' vertices. Object {@code i} is actor
 * {@code i}; drawing order is depth order.
 *
 * <ul>
 *   <li>{@code shake-contact}: a shaking camera (7-8 px) and pairs of objects in contact: a turned ellipse
 *       pressed against a box's side for the whole clip (3 px overlap, moving together); a ring that comes to
 *       lie against an irregular polygon, rides along in contact, then parts.</li>
 *   <li>{@code same-colour}: objects of one colour crossing: two identical red discs (one passes in front of
 *       the other), and a yellow star crossed by a yellow turned ellipse and later by a yellow diamond.</li>
 *   <li>{@code long-occlusion}: objects hidden for more than 30 frames behind a larger one (the engine's
 *       {@code hidden-lost-after} is 30): a triangle that rides behind a drifting box for about 50 frames and
 *       comes out; a polygon that passes slowly behind a big ellipse (about 40 frames hidden) and a star that
 *       goes behind the same ellipse and stays there (taken over for good).</li>
 *   <li>{@code leave-return}: objects leaving the frame and coming back: a star out on the right for about 15
 *       frames, an ellipse out at the bottom for about 25; then a ring that dips out on the left for a few
 *       frames only, a polygon that leaves for good, a diamond out at the top for about 25 frames.</li>
 *   <li>{@code scene-cut}: at one frame the background texture and every object change (the objects before the
 *       cut are gone); new objects stand where old ones were, one of the old one's colour.</li>
 * </ul>
 */
public final class HardClips {
    public static final int WIDTH = 320;
    public static final int HEIGHT = 240;
    public static final double FPS = 30;
    /** The name that selects every family. */
    public static final String ALL = "hard";

    private static final int RED = PatternPainter.paletteColour(0);
    private static final int GREEN = PatternPainter.paletteColour(1);
    private static final int BLUE = PatternPainter.paletteColour(2);
    private static final int YELLOW = PatternPainter.paletteColour(3);
    private static final int MAGENTA = PatternPainter.paletteColour(4);
    private static final int CYAN = PatternPainter.paletteColour(5);
    private static final int ORANGE = 0xF08C28;

    private HardClips() {}

    /** Family name -> its clips, in the benchmark's order. */
    public static Map<String, List<SceneClip>> families() {
        Map<String, List<SceneClip>> f = new LinkedHashMap<>();
        f.put("shake-contact", List.of(shakeContactNoise(), shakeContactStripes()));
        f.put("same-colour", List.of(sameColourDiscs(), sameColourMixed()));
        f.put("long-occlusion", List.of(longOcclusionGradient(), longOcclusionChecker()));
        f.put("leave-return", List.of(leaveReturnNoise(), leaveReturnStripes()));
        f.put("scene-cut", List.of(sceneCutNoiseStripes(), sceneCutCheckerGradient()));
        return f;
    }

    /** Every clip of every family, by name. */
    public static Map<String, SceneClip> all() {
        Map<String, SceneClip> out = new LinkedHashMap<>();
        for (List<SceneClip> clips : families().values()) {
            for (SceneClip c : clips) {
                out.put(c.name(), c);
            }
        }
        return out;
    }

    /**
     * The clips of the families named (comma-separated names, or {@value #ALL} for every family), in the order
     * named; an unknown name is an error naming the known ones.
     */
    public static List<SceneClip> ofFamilies(List<String> names) {
        Map<String, List<SceneClip>> families = families();
        List<SceneClip> out = new ArrayList<>();
        for (String n : names) {
            String name = n.trim();
            if (name.equals(ALL)) {
                families.values().forEach(out::addAll);
            } else if (families.containsKey(name)) {
                out.addAll(families.get(name));
            } else {
                throw new IllegalArgumentException("unknown family '" + name + "' (families: " + ALL + ", "
                        + String.join(", ", families.keySet()) + ")");
            }
        }
        return out;
    }

    // ---- shake-contact ----

    public static SceneClip shakeContactNoise() {
        // The ellipse (turned 0.35 rad: 29.1 px from its centre to its leftmost point) starts 16 px clear of the
        // box's right side; from frame 6 on it is drawn over that side: its centre 28 + 29 - 3 px right of the
        // box's, both on the same path.
        double[] boxPath = {0, 70, 110, 59, 180, 135};
        double[] at6 = new SceneClip.Actor(new Pattern(Kind.BOX, 28), BLUE, 0, 0, 0, boxPath).position(6);
        return SceneClip.builder("shake-contact-noise", "shake-contact", 60, 101).shake(7).background(Texture.NOISE)
                .actor(new Pattern(Kind.BOX, 28), BLUE, 0, 0, boxPath)
                .actor(new Ellipse(30, 20), YELLOW, 0.35, 0, 0, 140, 110, 6, at6[0] + 54, at6[1], 59, 234, 135)
                .actor(new Star(5, 26, 12), RED, 0, 0.03, 0, 250, 60, 59, 235, 195)
                .build();
    }

    public static SceneClip shakeContactStripes() {
        Polygon polygon = Polygon.irregular(new Random(202), 7, 30, 0.3);
        // The ring comes from the right, lies against the polygon from frame 16 to 44, then leaves upwards.
        double ringOffset = contactOffset(polygon, new Ring(24, 11));
        double[] polygonPath = {0, 60, 140, 59, 180, 120};
        SceneClip.Actor probe = new SceneClip.Actor(polygon, GREEN, 0, 0, 0, polygonPath);
        double[] at16 = probe.position(16);
        double[] at44 = probe.position(44);
        return SceneClip.builder("shake-contact-stripes", "shake-contact", 60, 202).shake(8).background(Texture.STRIPES)
                .actor(polygon, GREEN, 0, 0, polygonPath)
                .actor(new Ring(24, 11), MAGENTA, 0, 0, 0, 290, 150, 16, at16[0] + ringOffset, at16[1],
                        44, at44[0] + ringOffset, at44[1], 59, 230, 40)
                .actor(new Ellipse(28, 16), CYAN, -0.6, 0.04, 0, 240, 210, 59, 60, 200)
                .build();
    }

    /**
     * How far right of a polygon's centre another shape's centre must be for the two to overlap by 2 px on the
     * horizontal line through the centres: the polygon's extent to the right on that line plus the other's
     * extent to the left, minus 2.
     */
    private static double contactOffset(Polygon polygon, Outline other) {
        double right = 0;
        for (double u = 0; u < 60; u += 0.25) {
            if (polygon.covers(u, 0)) {
                right = u;
            }
        }
        double left = 0;
        for (double u = 0; u < 60; u += 0.25) {
            if (other.covers(-u, 0)) {
                left = u;
            }
        }
        return right + left - 2;
    }

    // ---- same-colour ----

    public static SceneClip sameColourDiscs() {
        return SceneClip.builder("same-colour-discs", "same-colour", 60, 303).background(Texture.PATTERN)
                .actor(new Pattern(Kind.DISC, 24), RED, 0, 0, 0, 45, 110, 59, 275, 130)
                .actor(new Pattern(Kind.DISC, 24), RED, 0, 0, 0, 275, 100, 59, 45, 126)
                .actor(new Pattern(Kind.BOX, 22), GREEN, 0, 0, 0, 150, 205, 59, 190, 200)
                .build();
    }

    public static SceneClip sameColourMixed() {
        return SceneClip.builder("same-colour-mixed", "same-colour", 60, 304).background(Texture.CHECKER)
                .actor(new Star(5, 28, 13), YELLOW, 0, 0.04, 0, 50, 120, 59, 250, 120)
                .actor(new Ellipse(32, 18), YELLOW, 0.5, 0.05, 0, 270, 135, 59, 60, 110)
                .actor(new Pattern(Kind.DIAMOND, 24), YELLOW, 0, 0, 0, 215, -10, 59, 215, 235)
                .build();
    }

    // ---- long-occlusion ----

    public static SceneClip longOcclusionGradient() {
        // The box drifts right at 0.6 px/frame; the triangle (4.2 px/frame) catches it up, rides behind its
        // centre from frame 28 to 62, then runs out on the right: hidden from about frame 21 to 68.
        double[] boxPath = {0, 140, 120, 89, 140 + 0.6 * 89, 120};
        SceneClip.Actor box = new SceneClip.Actor(new Pattern(Kind.BOX, 50), BLUE, 0, 0, 0, boxPath);
        double x28 = box.position(28)[0];
        double x62 = box.position(62)[0];
        return SceneClip.builder("long-occlusion-gradient", "long-occlusion", 90, 405).background(Texture.GRADIENT)
                .actor(new Pattern(Kind.TRIANGLE, 22), CYAN, 0, 0, 0, 40, 125, 28, x28, 125, 62, x62, 125, 89,
                        x62 + 4.2 * 27, 125)
                .actor(new Pattern(Kind.BOX, 50), BLUE, 0, 0, boxPath)
                .actor(new Ring(20, 9), ORANGE, 0, 0, 0, 280, 35, 89, 50, 40)
                .build();
    }

    public static SceneClip longOcclusionChecker() {
        Polygon polygon = Polygon.irregular(new Random(406), 6, 24, 0.3);
        return SceneClip.builder("long-occlusion-checker", "long-occlusion", 80, 406).background(Texture.CHECKER)
                .actor(polygon, CYAN, 0, 0.02, 0, 70, 110, 25, 170, 120, 50, 182, 122, 79, 290, 118)
                .actor(new Star(5, 22, 10), GREEN, 0, 0.03, 0, 50, 215, 60, 165, 128, 79, 168, 128)
                .actor(new Ellipse(64, 46), RED, 0.15, 0.003, 0, 170, 125, 79, 172, 126)
                .build();
    }

    // ---- leave-return ----

    public static SceneClip leaveReturnNoise() {
        return SceneClip.builder("leave-return-noise", "leave-return", 70, 507).background(Texture.NOISE)
                .actor(new Star(6, 26, 13), MAGENTA, 0, 0.02, 0, 200, 70, 30, 352, 70, 44, 352, 80, 64, 240, 80,
                        69, 215, 80)
                .actor(new Ellipse(30, 16), GREEN, 0.4, 0.06, 0, 100, 150, 18, 100, 275, 40, 120, 275, 58, 130, 170,
                        69, 135, 150)
                .actor(new Pattern(Kind.BOX, 24), YELLOW, 0, 0, 0, 170, 190, 69, 210, 175)
                .build();
    }

    public static SceneClip leaveReturnStripes() {
        Polygon polygon = Polygon.irregular(new Random(508), 8, 28, 0.3);
        return SceneClip.builder("leave-return-stripes", "leave-return", 60, 508).shake(4).background(Texture.STRIPES)
                .actor(new Ring(24, 11), CYAN, 0, 0, 0, 80, 60, 14, -32, 60, 17, -32, 62, 30, 60, 70, 59, 120, 75)
                .actor(polygon, ORANGE, 0, 0.03, 0, 230, 175, 30, 365, 175)
                .actor(new Pattern(Kind.DIAMOND, 26), BLUE, 0, 0, 0, 200, 80, 12, 200, -40, 34, 170, -40, 50, 150, 90,
                        59, 150, 110)
                .build();
    }

    // ---- scene-cut ----

    public static SceneClip sceneCutNoiseStripes() {
        // Where the old objects are at the cut (frame 30), new ones stand.
        return SceneClip.builder("scene-cut-noise-stripes", "scene-cut", 60, 609).background(Texture.NOISE)
                .actor(new Pattern(Kind.DISC, 26), RED, 0, 0, 0, 60, 80, 59, 240, 80)
                .actor(new Star(5, 27, 12), BLUE, 0, 0.03, 0, 240, 170, 59, 100, 160)
                .actor(new Ellipse(30, 18), YELLOW, 0.3, 0.02, 0, 260, 50, 59, 200, 60)
                .cut(30, Texture.STRIPES)
                .actor(new Pattern(Kind.BOX, 28), GREEN, 0, 0, 30, 152, 84, 59, 100, 100)
                .actor(new Ring(25, 11), MAGENTA, 0, 0, 30, 168, 162, 59, 230, 150)
                .actor(Polygon.irregular(new Random(610), 7, 28, 0.3), CYAN, 0, 0.02, 30, 60, 190, 59, 90, 180)
                .build();
    }

    public static SceneClip sceneCutCheckerGradient() {
        Polygon before = Polygon.irregular(new Random(611), 6, 27, 0.3);
        return SceneClip.builder("scene-cut-checker-gradient", "scene-cut", 60, 611).shake(5).background(Texture.CHECKER)
                .actor(new Pattern(Kind.TRIANGLE, 26), GREEN, 0, 0, 0, 70, 170, 59, 190, 150)
                .actor(new Ring(24, 10), YELLOW, 0, 0, 0, 250, 70, 59, 180, 90)
                .actor(before, RED, 0, 0.03, 0, 110, 60, 59, 160, 100)
                .cut(34, Texture.GRADIENT)
                .actor(new Star(5, 28, 12), RED, 0.2, 0.03, 34, 137, 77, 59, 120, 60)
                .actor(new Ellipse(30, 18), GREEN, -0.3, 0.02, 34, 138, 161, 59, 200, 170)
                .actor(new Pattern(Kind.DIAMOND, 25), BLUE, 0, 0, 34, 250, 190, 59, 270, 140)
                .build();
    }
}
