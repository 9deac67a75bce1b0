package io.samstream.gpu.predict;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.predict.AutomaticMaskGenerator.Settings;
import io.samstream.gpu.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The generator's pipeline on a scripted decoder: its masks are known exactly, so every filter, the
 * NMS and the small-region clean-up can be checked against what they must keep.
 */
class AutomaticMaskGeneratorTest {
    /** A 64x48 image; the model's input is 64 (no resize), low-res logits 32 x 32 (2 pixels a cell). */
    private static final int W = 64;
    private static final int H = 48;
    private static final Tensor EMBEDDING = Tensor.zeros(1, 32, 8, 8);

    /** Objects of the scripted scene, in low-res cells: {x0, y0, x1, y1} exclusive. */
    private static final int[] A = {2, 2, 10, 8};   // pixels 4..19 x 4..15
    private static final int[] B = {16, 10, 28, 20}; // pixels 32..55 x 20..39
    private static final int[] C = {3, 18, 4, 19};   // a 2x2-pixel object (pixels 6..7 x 36..37)
    private static final int[] SPECK = {28, 2, 29, 3}; // a 2x2-pixel speck far from A

    /**
     * Decodes a point into three masks: inside A, B or C the object itself (IoU 0.95, 0.97, 0.99), again
     * (IoU 0.90; for A with a far speck added) and a weak blob (IoU 0.50); elsewhere three background masks that
     * the IoU filter drops, except inside the "unstable" stripe whose confident mask has logits too close
     * to 0 to be stable.
     */
    private static final class ScriptedBackend implements SamBackend {
        final List<Integer> batchSizes = new ArrayList<>();
        int decodes;

        @Override
        public SamConfig config() {
            return new SamConfig(64, 8, 32, 1, 1, 64, 4, new int[0], 32, 8, 2, 8, 64, 2, 3, 3, 32);
        }

        @Override
        public String name() {
            return "scripted";
        }

        @Override
        public Tensor encode(Tensor images) {
            throw new UnsupportedOperationException();
        }

        @Override
        public List<DecoderOutput> decodeBatch(Tensor embedding, List<Prompt> prompts, boolean multimask) {
            batchSizes.add(prompts.size());
            return SamBackend.super.decodeBatch(embedding, prompts, multimask);
        }

        @Override
        public DecoderOutput decode(Tensor embedding, Prompt prompt, boolean multimask) {
            assertTrue(multimask, "three masks per point");
            assertEquals(1, prompt.pointCount());
            assertEquals(1, prompt.labels()[0], "a foreground point");
            decodes++;
            // Model input = original pixels here; cells are 2 pixels.
            int cx = (int) (prompt.points()[0][0] / 2);
            int cy = (int) (prompt.points()[0][1] / 2);
            float[] l = new float[3 * 32 * 32];
            java.util.Arrays.fill(l, -10f);
            for (int[] o : new int[][] {A, B, C}) {
                if (inside(o, cx, cy)) {
                    float iou = o == A ? 0.95f : o == B ? 0.97f : 0.99f;
                    fill(l, 0, o, 10f);
                    fill(l, 1, o, 10f);
                    if (o == A) {
                        fill(l, 1, SPECK, 10f);
                    }
                    fill(l, 2, new int[] {0, 0, 32, 32}, 0.5f);
                    return new DecoderOutput(new Tensor(l, 3, 32, 32), new float[] {iou, 0.90f, 0.50f});
                }
            }
            if (cy >= 20) { // the bottom stripe: a confident but unstable mask
                fill(l, 0, new int[] {20, 20, 30, 30}, 0.5f);
                return new DecoderOutput(new Tensor(l, 3, 32, 32), new float[] {0.99f, 0.1f, 0.1f});
            }
            return new DecoderOutput(new Tensor(l, 3, 32, 32), new float[] {0.3f, 0.2f, 0.1f});
        }

        private static boolean inside(int[] o, int cx, int cy) {
            return cx >= o[0] && cx < o[2] && cy >= o[1] && cy < o[3];
        }

        private static void fill(float[] l, int plane, int[] o, float v) {
            for (int y = o[1]; y < o[3]; y++) {
                for (int x = o[0]; x < o[2]; x++) {
                    l[plane * 1024 + y * 32 + x] = v;
                }
            }
        }
    }

    /** A fine grid so every object gets several points: 16 x 16 points, 4 x 3 pixels apart. */
    private static Settings settings(int minArea) {
        return new Settings(16, 40, 0.88f, 0.95f, 1.0f, 0.7f, minArea);
    }

    private static double[] pixelBox(int[] cells) {
        return new double[] {2 * cells[0], 2 * cells[1], 2 * cells[2], 2 * cells[3]};
    }

    @Test
    void decodesTheGridInBatchesOfThreeMaskPoints() {
        ScriptedBackend backend = new ScriptedBackend();
        new AutomaticMaskGenerator(backend, settings(0)).generate(EMBEDDING, W, H);
        assertEquals(256, backend.decodes);
        assertEquals(List.of(40, 40, 40, 40, 40, 40, 16), backend.batchSizes);
    }

    @Test
    void keepsOneMaskPerObjectBestFirstAndTheSpeckyVariantWithoutCleanUp() {
        ScriptedBackend backend = new ScriptedBackend();
        AutomaticMaskGenerator generator = new AutomaticMaskGenerator(backend, settings(0));
        List<GeneratedMask> masks = generator.generate(EMBEDDING, W, H);
        // C (0.99), B (0.97), A (0.95), then A + speck (0.90): its box reaches the speck, so box NMS keeps
        // it; the weak (0.50) and unstable masks are filtered out; the duplicates from every point in an
        // object, and the 0.90 copies of B and C, are suppressed.
        assertEquals(4, masks.size(), describe(masks));
        assertArrayEquals(new float[] {0.99f, 0.97f, 0.95f, 0.90f}, new float[] {masks.get(0).predictedIou(),
            masks.get(1).predictedIou(), masks.get(2).predictedIou(), masks.get(3).predictedIou()});
        assertArrayEquals(pixelBox(C), masks.get(0).box());
        assertArrayEquals(pixelBox(B), masks.get(1).box());
        assertArrayEquals(pixelBox(A), masks.get(2).box());
        assertArrayEquals(new double[] {2 * A[0], 2 * A[1], 2 * SPECK[2], 2 * A[3]}, masks.get(3).box());
        assertEquals(4, masks.get(0).area());
        assertEquals(24 * 20, masks.get(1).area());
        assertEquals(16 * 12, masks.get(2).area());
        assertEquals(16 * 12 + 4, masks.get(3).area());
        for (GeneratedMask m : masks) {
            assertEquals(1f, m.stability(), "+-10 logits: the same mask at +1 and -1");
            assertArrayEquals(new int[] {1, 32, 32}, m.lowResLogits().shape());
            boolean[] mask = generator.mask(m, W, H);
            long area = 0;
            for (boolean b : mask) {
                area += b ? 1 : 0;
            }
            assertEquals(m.area(), area);
            assertEquals(m.area(), m.rle().area());
        }
        // Among equal scores NMS keeps the first grid point in the object: the one nearest the top left.
        double[] p = masks.get(2).point();
        assertTrue(p[0] >= 4 && p[0] < 4 + 4 && p[1] >= 4 && p[1] < 4 + 3, "first grid point in A: "
                + p[0] + "," + p[1]);
    }

    @Test
    void minAreaCleansTheSpeckAwayMergesTheDuplicateAndDropsTinyMasks() {
        List<GeneratedMask> masks = new AutomaticMaskGenerator(new ScriptedBackend(), settings(10))
                .generate(EMBEDDING, W, H);
        // The speck (4 pixels < 10) is removed: A + speck becomes A and the second NMS keeps the
        // untouched A. C (4 pixels) keeps its only island but is under the minimum area.
        assertEquals(2, masks.size(), describe(masks));
        assertArrayEquals(pixelBox(B), masks.get(0).box());
        assertArrayEquals(pixelBox(A), masks.get(1).box());
        assertEquals(0.95f, masks.get(1).predictedIou(), "the unchanged A wins, not the cleaned variant");
    }

    @Test
    void thresholdsAtZeroTurnTheFiltersOff() {
        Settings noFilters = new Settings(16, 64, 0f, 0f, 1.0f, 0.7f, 0);
        List<GeneratedMask> masks = new AutomaticMaskGenerator(new ScriptedBackend(), noFilters)
                .generate(EMBEDDING, W, H);
        // Now the weak whole-frame blob (0.5 everywhere) and the unstable stripe survive too.
        assertTrue(masks.stream().anyMatch(m -> m.predictedIou() == 0.50f), describe(masks));
        assertTrue(masks.stream().anyMatch(m -> m.stability() == 0f && m.predictedIou() == 0.99f), describe(masks));
    }

    @Test
    void pointsOnCoveredPixelsAreNotDecoded() {
        ScriptedBackend backend = new ScriptedBackend();
        boolean[] covered = new boolean[W * H];
        for (int y = 2 * B[1]; y < 2 * B[3]; y++) {
            for (int x = 2 * B[0]; x < 2 * B[2]; x++) {
                covered[y * W + x] = true; // B is already tracked
            }
        }
        List<GeneratedMask> masks = new AutomaticMaskGenerator(backend, settings(0)).generate(EMBEDDING, W, H, covered);
        // B spans pixels 32..55 x 20..39: grid columns x = 34, 38, ..., 54 (6), rows y = 22.5, ..., 37.5 (6).
        assertEquals(256 - 6 * 6, backend.decodes);
        assertEquals(3, masks.size(), describe(masks));
        assertTrue(masks.stream().noneMatch(m -> m.predictedIou() == 0.97f), "B is not found again");
        assertEquals("the covered mask has 10 pixels, the image 64x48 has 3072", assertThrows(
                IllegalArgumentException.class, () -> new AutomaticMaskGenerator(backend, settings(0))
                        .generate(EMBEDDING, W, H, new boolean[10])).getMessage());
    }

    @Test
    void rejectsAnEmbeddingOfSeveralImages() {
        AutomaticMaskGenerator g = new AutomaticMaskGenerator(new ScriptedBackend(), settings(0));
        assertEquals("the embedding must be one image's [1, C, E, E], got [2, 32, 8, 8]",
                assertThrows(IllegalArgumentException.class, () -> g.generate(Tensor.zeros(2, 32, 8, 8), W, H))
                        .getMessage());
    }

    @Test
    void settingsNameTheBadValue() {
        Settings d = Settings.defaults();
        assertEquals(new Settings(32, 64, 0.88f, 0.95f, 1.0f, 0.7f, 0), d, "the reference's defaults");
        assertMessage("pointsPerSide must be in 1..1024, got 0", () -> new Settings(0, 64, 0.88f, 0.95f, 1f, 0.7f, 0));
        assertMessage("pointsPerBatch must be at least 1, got 0", () -> new Settings(32, 0, 0.88f, 0.95f, 1f, 0.7f, 0));
        assertMessage("predIouThreshold must be in [0, 1], got 1.5",
                () -> new Settings(32, 64, 1.5f, 0.95f, 1f, 0.7f, 0));
        assertMessage("stabilityThreshold must be in [0, 1], got NaN",
                () -> new Settings(32, 64, 0.88f, Float.NaN, 1f, 0.7f, 0));
        assertMessage("stabilityOffset must be finite and > 0, got 0.0",
                () -> new Settings(32, 64, 0.88f, 0.95f, 0f, 0.7f, 0));
        assertMessage("boxNmsThreshold must be in [0, 1], got -0.1",
                () -> new Settings(32, 64, 0.88f, 0.95f, 1f, -0.1f, 0));
        assertMessage("minArea must be >= 0 pixels, got -5", () -> new Settings(32, 64, 0.88f, 0.95f, 1f, 0.7f, -5));
    }

    private static void assertMessage(String expected, org.junit.jupiter.api.function.Executable e) {
        assertEquals(expected, assertThrows(IllegalArgumentException.class, e).getMessage());
    }

    private static String describe(List<GeneratedMask> masks) {
        StringBuilder sb = new StringBuilder();
        for (GeneratedMask m : masks) {
            sb.append(String.format("%n iou %.2f stab %.2f area %d box %s", m.predictedIou(), m.stability(), m.area(),
                    java.util.Arrays.toString(m.box())));
        }
        return sb.toString();
    }
}
