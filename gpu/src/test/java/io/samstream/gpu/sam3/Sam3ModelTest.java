package io.samstream.gpu.sam3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The CPU reference end to end at the tiny configuration with the fixtures' deterministic weights: shapes, ranges,
 * and the invariants that do not need Meta's outputs (thread count, padding, prompts that must or must not change
 * the result). Parity with Meta's model is {@link Sam3ReferenceParityTest}.
 */
class Sam3ModelTest {
    static final Path VOCAB = Path.of("src/test/resources/fixtures/sam3/tokenizer/test_bpe_vocab.txt.gz");
    static Sam3Model model;
    static Sam3Tokenizer tokenizer;
    static VisionFeatures image;

    @BeforeAll
    static void build() {
        StateDict sd = Sam3Weights.stateDict(Sam3Weights.TINY);
        model = new Sam3Model(sd, 2);
        tokenizer = Sam3Tokenizer.load(VOCAB);
        image = model.encodeImage(Sam3Preprocessor.modelInput(scene(160, 120), 112));
    }

    @AfterAll
    static void close() {
        model.close();
    }

    /** A gradient with a red disc and a blue square. */
    static RgbImage scene(int w, int h) {
        byte[] rgb = new byte[w * h * 3];
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                int r = 60 + x * 80 / w;
                int g = 70 + y * 60 / h;
                int b = 90 + (x + y) * 50 / (w + h);
                if ((x - w * 3 / 10) * (x - w * 3 / 10) + (y - h * 35 / 100) * (y - h * 35 / 100) <= 400) {
                    r = 220;
                    g = 40;
                    b = 40;
                } else if (Math.abs(x - w * 62 / 100) <= 16 && Math.abs(y - h * 55 / 100) <= 16) {
                    r = 40;
                    g = 60;
                    b = 220;
                }
                int o = (y * w + x) * 3;
                rgb[o] = (byte) r;
                rgb[o + 1] = (byte) g;
                rgb[o + 2] = (byte) b;
            }
        }
        return new RgbImage(w, h, rgb);
    }

    @Test
    void imageFeaturesHaveTheNecksShapes() {
        assertEquals(8, image.grid());
        assertEquals(64 * 48, image.trunk().length());
        assertEquals(32 * 32 * 32, image.fpn()[0].length);
        assertEquals(16 * 16 * 32, image.fpn()[1].length);
        assertEquals(8 * 8 * 32, image.fpn()[2].length);
        assertEquals(8 * 8 * 32, image.pos().length);
        for (float[] level : image.fpn()) {
            assertAllFinite(level);
        }
    }

    @Test
    void detectionsAreFiniteAndInRange() {
        Detections det = detect("red circle", List.of());
        assertEquals(20, det.count());
        assertAllFinite(det.logits());
        for (float v : det.boxes()) {
            assertTrue(v >= 0f && v <= 1f, "box coordinate " + v);
        }
        for (float v : det.logits()) {
            assertTrue(Math.abs(v) <= DotProductScoring.CLAMP);
        }
        assertTrue(Float.isFinite(det.presence()));
        int[] rank = det.ranking();
        for (int i = 1; i < rank.length; i++) {
            assertTrue(det.logits()[rank[i - 1]] >= det.logits()[rank[i]]);
        }
        float[] masks = model.masks(det, new int[] {rank[0], rank[1]});
        assertEquals(2 * 32 * 32, masks.length);
        assertAllFinite(masks);
    }

    @Test
    void resultsDoNotDependOnTheThreadCount() {
        try (Sam3Model single = new Sam3Model(Sam3Weights.stateDict(Sam3Weights.TINY), 1)) {
            VisionFeatures one = single.encodeImage(Sam3Preprocessor.modelInput(scene(160, 120), 112));
            assertArrayEquals(image.fpn()[0], one.fpn()[0]);
            Detections a = detect("square", List.of());
            Detections b = single.detect(one, single.encodeText(tokenizer.tokenize("square", 32)), List.of());
            assertArrayEquals(a.logits(), b.logits());
            assertArrayEquals(a.boxes(), b.boxes());
            assertEquals(a.presence(), b.presence());
        }
    }

    @Test
    void promptsChangeTheResultAndPaddingDoesNot() {
        Detections circle = detect("red circle", List.of());
        Detections square = detect("square", List.of());
        assertNotEquals(circle.logits()[0], square.logits()[0]);
        Detections boxed = detect("square", List.of(new ExemplarBox(0.62f, 0.55f, 0.25f, 0.3f, true)));
        assertNotEquals(square.logits()[0], boxed.logits()[0]);
        Detections negative = detect("square", List.of(new ExemplarBox(0.62f, 0.55f, 0.25f, 0.3f, false)));
        assertNotEquals(boxed.logits()[0], negative.logits()[0]);
        // the padding rows' values are masked out everywhere: changing them changes nothing
        TextFeatures text = model.encodeText(tokenizer.tokenize("square", 32));
        float[] rows = text.rows().clone();
        int d = model.config().detector().dModel();
        for (int i = 0; i < text.length(); i++) {
            if (text.padding()[i]) {
                for (int c = 0; c < d; c++) {
                    rows[i * d + c] += 3f;
                }
            }
        }
        Detections shifted = model.detect(image, new TextFeatures(text.tokens(), rows, text.padding()), List.of());
        assertArrayEquals(square.logits(), shifted.logits(), 1e-5f);
        assertArrayEquals(square.boxes(), shifted.boxes(), 1e-6f);
    }

    @Test
    void facadeFindsInstancesAtTheThresholdAsMetasProcessor() {
        Sam3Image sam = new Sam3Image(model, tokenizer);
        Sam3Image.Encoded encoded = sam.encode(scene(160, 120));
        Sam3Result all = sam.find(encoded, "red circle", List.of(), 0f);
        assertEquals(20, all.instances().size());
        Sam3Result.Instance best = all.instances().get(0);
        assertEquals(160 * 120, best.mask().length);
        assertTrue(best.box()[2] >= best.box()[0] && best.box()[3] >= best.box()[1]);
        for (int i = 1; i < all.instances().size(); i++) {
            assertTrue(all.instances().get(i - 1).score() >= all.instances().get(i).score() - 1e-7f);
        }
        float cut = all.instances().get(5).score();
        Sam3Result some = sam.find(encoded, "red circle", List.of(), cut);
        assertTrue(some.instances().size() <= 5, some.instances().size() + " instances over " + cut);
        assertEquals(all.presence(), some.presence());
        assertFalse(sam.find(encoded, "red circle", List.of(), 1f).instances().iterator().hasNext());
    }

    @Test
    void badInputsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> model.encodeImage(new float[10]));
        assertThrows(IllegalArgumentException.class, () -> model.encodeText(new int[5]));
        int[] ids = tokenizer.tokenize("red", 32);
        ids[1] = 999_999;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> model.encodeText(ids));
        assertTrue(e.getMessage().contains("vocabulary"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new ExemplarBox(0.5f, 0.5f, 1.5f, 0.2f, true));
        assertThrows(IllegalArgumentException.class, () -> new ExemplarBox(Float.NaN, 0.5f, 0.5f, 0.2f, true));
    }

    private static Detections detect(String phrase, List<ExemplarBox> boxes) {
        return model.detect(image, model.encodeText(tokenizer.tokenize(phrase, 32)), boxes);
    }

    static void assertAllFinite(float[] values) {
        for (float v : values) {
            assertTrue(Float.isFinite(v), "non-finite value " + v);
        }
    }
}
