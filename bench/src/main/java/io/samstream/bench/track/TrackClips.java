package io.samstream.bench.track;

import io.samstream.bench.track.SyntheticClip.Shape;
import io.samstream.connectors.video.PatternPainter;
import io.samstream.connectors.video.PatternPainter.Kind;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The clips of the tracking benchmark: 320x240 (the demo model's most frequent training size), 48 frames
 * at 30 fps, shapes of radius 22-32 px (7-13 % of the short side, as in the test pattern). Paths are
 * written out by hand so that each clip tests one thing; the seed only picks the texture (and the shake).
 *
 * <ul>
 *   <li>{@code constant-motion}: four shapes on straight paths at 1.5-3 px/frame, never touching, always
 *       fully visible.</li>
 *   <li>{@code occlusion}: two pairs cross. A box passes in front of a diamond (at the crossing 17 % of
 *       the diamond shows), a disc in front of a triangle; both pairs are apart at the start and end.</li>
 *   <li>{@code enter-leave}: a disc enters from the left (fully in from frame 14), a diamond from the
 *       bottom (from frame 20); a box leaves on the right (gone from frame 34), a triangle on the left
 *       (gone from frame 40).</li>
 *   <li>{@code camera-shake}: four slow shapes seen by a camera that jumps up to 6 px in x and y every
 *       frame (the background moves with them).</li>
 * </ul>
 */
public final class TrackClips {
    public static final int WIDTH = 320;
    public static final int HEIGHT = 240;
    public static final int FRAMES = 48;
    public static final double FPS = 30;

    private TrackClips() {}

    /** Every clip, by name, in the benchmark's order. */
    public static Map<String, SyntheticClip> all() {
        Map<String, SyntheticClip> clips = new LinkedHashMap<>();
        for (SyntheticClip c : List.of(constantMotion(), occlusion(), enterLeave(), cameraShake())) {
            clips.put(c.name(), c);
        }
        return clips;
    }

    /** The clips named in {@code names} (in that order); an unknown name is an error naming the known ones. */
    public static List<SyntheticClip> named(List<String> names) {
        Map<String, SyntheticClip> all = all();
        List<SyntheticClip> out = new ArrayList<>();
        for (String n : names) {
            SyntheticClip c = all.get(n.trim());
            if (c == null) {
                throw new IllegalArgumentException("unknown clip '" + n + "' (clips: " + String.join(", ", all.keySet())
                        + ")");
            }
            out.add(c);
        }
        return out;
    }

    public static SyntheticClip constantMotion() {
        return new SyntheticClip("constant-motion", WIDTH, HEIGHT, FRAMES, FPS, 11, 0, List.of(
                new Shape(Kind.DISC, colour(0), 24, 40, 50, 2.6, 0.2),
                new Shape(Kind.BOX, colour(1), 26, 285, 190, -2.6, -0.3),
                new Shape(Kind.TRIANGLE, colour(2), 28, 150, 120, 2.0, 0),
                new Shape(Kind.DIAMOND, colour(3), 22, 50, 125, 1.5, 0)));
    }

    public static SyntheticClip occlusion() {
        return new SyntheticClip("occlusion", WIDTH, HEIGHT, FRAMES, FPS, 22, 0, List.of(
                // Drawing order is depth order: the box covers the diamond, the disc covers the triangle.
                new Shape(Kind.DIAMOND, colour(4), 30, 110, 75, 3.0, 0),
                new Shape(Kind.BOX, colour(1), 32, 222, 85, -2.6, 0),
                new Shape(Kind.TRIANGLE, colour(3), 30, 105, 180, 2.2, 0),
                new Shape(Kind.DISC, colour(2), 26, 215, 172, -2.4, 0)));
    }

    public static SyntheticClip enterLeave() {
        return new SyntheticClip("enter-leave", WIDTH, HEIGHT, FRAMES, FPS, 33, 0, List.of(
                new Shape(Kind.DISC, colour(5), 24, -30, 60, 4.0, 0),
                new Shape(Kind.BOX, colour(0), 26, 230, 120, 3.5, 0),
                new Shape(Kind.DIAMOND, colour(3), 24, 200, 275, 0, -3.0),
                new Shape(Kind.TRIANGLE, colour(1), 28, 110, 175, -3.5, 0.2)));
    }

    public static SyntheticClip cameraShake() {
        return new SyntheticClip("camera-shake", WIDTH, HEIGHT, FRAMES, FPS, 44, 6, List.of(
                new Shape(Kind.BOX, colour(2), 28, 70, 60, 1.5, 0.5),
                new Shape(Kind.DISC, colour(0), 22, 250, 70, -1.0, 0.8),
                new Shape(Kind.TRIANGLE, colour(4), 26, 80, 170, 2.0, -0.3),
                new Shape(Kind.DIAMOND, colour(1), 26, 260, 185, -0.5, -0.3)));
    }

    private static int colour(int i) {
        return PatternPainter.paletteColour(i);
    }
}
