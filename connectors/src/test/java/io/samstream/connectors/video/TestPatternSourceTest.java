package io.samstream.connectors.video;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class TestPatternSourceTest {
    @Test
    void sameSeedSameFramesOtherSeedOtherFrames() throws IOException {
        TestPatternSource a = new TestPatternSource("a", 64, 48, 25, 10, 42, false);
        TestPatternSource b = new TestPatternSource("b", 64, 48, 25, 10, 42, false);
        TestPatternSource c = new TestPatternSource("c", 64, 48, 25, 10, 43, false);
        for (int i = 0; i < 10; i++) {
            VideoFrame fa = a.next();
            VideoFrame fb = b.next();
            assertArrayEquals(fa.rgb(), fb.rgb(), "frame " + i);
            assertFalse(Arrays.equals(fa.rgb(), c.next().rgb()), "seed 43 looks like seed 42 at frame " + i);
            assertEquals(i, fa.index());
            assertEquals(i * 40, fa.ptsMillis());
        }
        assertNull(a.next());
    }

    @Test
    void shapesMoveAndSitWhereObjectsAtSays() {
        TestPatternSource pattern = new TestPatternSource("p", 160, 120, 30, TestPatternSource.ENDLESS, 7, false);
        byte[] first = pattern.render(0);
        byte[] later = pattern.render(15);
        assertFalse(Arrays.equals(first, later), "nothing moved in half a second");
        for (long index : new long[] {0, 15, 1000}) {
            List<TestPatternSource.PatternObject> objects = pattern.objectsAt(index);
            assertEquals(4, objects.size());
            // The last shape is drawn on top: its centre pixel has its colour.
            TestPatternSource.PatternObject top = objects.get(3);
            byte[] rgb = pattern.render(index);
            int at = 3 * (top.centerY() * 160 + top.centerX());
            int colour = (rgb[at] & 0xFF) << 16 | (rgb[at + 1] & 0xFF) << 8 | rgb[at + 2] & 0xFF;
            assertEquals(top.rgb(), colour, "frame " + index + " at " + top.centerX() + "," + top.centerY());
            assertTrue(top.centerX() >= 0 && top.centerX() < 160 && top.centerY() >= 0 && top.centerY() < 120);
        }
    }

    /**
     * The demo model was trained on these exact pixels (tools/demo_model/scenes.py re-implements them) and
     * the tracking benchmark paints with the same {@link PatternPainter}: a refactor must not change them.
     * The digest was taken before the drawing moved into PatternPainter.
     */
    @Test
    void thePixelsStayTheSameAcrossRefactors() throws Exception {
        java.security.MessageDigest md = java.security.MessageDigest.getInstance("SHA-256");
        for (long seed : new long[] {1, 7, 42}) {
            TestPatternSource p = new TestPatternSource("x", 320, 240, 30, 60, seed, false);
            for (int i = 0; i < 60; i += 7) {
                md.update(p.render(i));
            }
        }
        md.update(new TestPatternSource("x", 1280, 720, 25, 60, 3, false).render(33));
        assertEquals("9f9d03494b556f4e241ab1ed1096c257d571ca1e097b9e88ef729014ba22a5a5",
                java.util.HexFormat.of().formatHex(md.digest()));
    }

    @Test
    void backgroundHasTexture() {
        byte[] rgb = new TestPatternSource("t", 64, 48, 10, 1, 0, false).render(0);
        long distinct = java.util.stream.IntStream.range(0, 64 * 48)
                .map(p -> (rgb[3 * p] & 0xFF) << 16 | (rgb[3 * p + 1] & 0xFF) << 8 | rgb[3 * p + 2] & 0xFF)
                .distinct().count();
        assertTrue(distinct > 200, distinct + " colours");
    }

    @Test
    void livePatternPacesFramesAtItsRate() throws IOException {
        try (FrameSource live = FrameSources.open(SourceSpec.of("cam", "testpattern:32x32@50?frames=6&live=true"))) {
            assertTrue(live.isLive());
            long start = System.nanoTime();
            for (int i = 0; i < 6; i++) {
                live.next();
            }
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(millis >= 90, "6 frames at 50 fps came in " + millis + " ms"); // 5 intervals of 20 ms
            assertNull(live.next());
        }
    }

    @Test
    void locationGivesSizeRateFramesAndSeed() throws IOException {
        FrameSource source = FrameSources.open(SourceSpec.of("s", "testpattern:80x60@12.5?frames=3&seed=9"));
        assertFalse(source.isLive());
        assertEquals("s testpattern:80x60@12.5?frames=3 (seed 9)", source.describe());
        VideoFrame frame = source.next();
        assertEquals(80, frame.width());
        assertEquals(60, frame.height());
        assertArrayEquals(new TestPatternSource("x", 80, 60, 12.5, 3, 9, false).render(0), frame.rgb());
        assertEquals(80, source.next().ptsMillis());
        source.next();
        assertNull(source.next());
    }

    @Test
    void optionsWorkLikeQueryParametersAndTheQueryWins() throws IOException {
        SourceSpec spec = new SourceSpec("s", "testpattern:32x32@10?seed=5", DecoderPreference.AUTO,
                Map.of("seed", "4", "frames", "2"));
        TestPatternSource source = FrameSources.testPattern(spec);
        assertEquals(5, source.seed());
        source.next();
        source.next();
        assertNull(source.next());
    }

    @Test
    void speedScalesHowFarTheShapesMovePerFrameOnTheSamePaths() throws IOException {
        TestPatternSource normal = new TestPatternSource("n", 160, 120, 10, TestPatternSource.ENDLESS, 3, false);
        TestPatternSource slow = (TestPatternSource) FrameSources.open(SourceSpec.of("s",
                "testpattern:160x120@10?seed=3&speed=0.25"));
        for (int i = 0; i < 4; i++) {
            TestPatternSource.PatternObject start = normal.objectsAt(0).get(i);
            assertEquals(start.centerX(), slow.objectsAt(0).get(i).centerX(), "same start");
            // Four frames of the slow scene go where one frame of the normal one goes (before any bounce).
            assertEquals(normal.objectsAt(1).get(i).centerX(), slow.objectsAt(4).get(i).centerX(), 1);
            assertEquals(normal.objectsAt(1).get(i).centerY(), slow.objectsAt(4).get(i).centerY(), 1);
        }
        for (String bad : List.of("0", "-1", "11", "fast", "NaN")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> FrameSources.open(SourceSpec.of("s", "testpattern:64x48@10?speed=" + bad)));
            assertTrue(e.getMessage().contains("speed"), e.getMessage());
        }
    }

    @Test
    void malformedLocationsSayWhatTheSyntaxIs() {
        for (String location : List.of("testpattern:", "testpattern:64x48", "testpattern:64x48@", "testpattern:axb@10")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> FrameSources.open(SourceSpec.of("s", location)));
            assertTrue(e.getMessage().contains("testpattern:WIDTHxHEIGHT@FPS"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> FrameSources.open(SourceSpec.of("s", "testpattern:8x8@10")));
        assertThrows(IllegalArgumentException.class,
                () -> FrameSources.open(SourceSpec.of("s", "testpattern:64x48@10?colour=red")));
        assertThrows(IllegalArgumentException.class,
                () -> FrameSources.open(SourceSpec.of("s", "testpattern:64x48@10?frames=0")));
    }
}
