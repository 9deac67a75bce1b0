package io.samstream.gpu.sam3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import io.samstream.gpu.sam3.video.Sam3VideoModel;
import io.samstream.gpu.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The seam of SAM 3's heavy parts ({@link Sam3Backend}: the ViT trunk, its necks, the fusion encoder and the mask
 * head) on the tiny configuration: the model and the video model's detector run the parts through the backend they are given, the
 * fusion seam's CPU reference is the detector's memory, and attending to a prompt's valid rows alone gives what the
 * key-padding mask gives (what the CUDA fusion encoder relies on: its attention kernel has no mask).
 */
class Sam3BackendTest {
    static StateDict sd;
    static Sam3Model model;
    static Sam3Tokenizer tokenizer;
    static VisionFeatures image;

    @BeforeAll
    static void build() {
        sd = Sam3Weights.stateDict(Sam3Weights.TINY);
        model = new Sam3Model(sd, 2);
        tokenizer = Sam3Tokenizer.load(Sam3ModelTest.VOCAB);
        image = model.encodeImage(Sam3Preprocessor.modelInput(Sam3ModelTest.scene(160, 120), 112));
    }

    @AfterAll
    static void close() {
        model.close();
    }

    @Test
    void theModelRunsItsTrunkNeckAndFusionEncoderThroughTheBackend() {
        Counting counting = new Counting();
        try (Sam3Model seamed = new Sam3Model(sd, Sam3Weights.TINY, 2, counting.factory())) {
            VisionFeatures features = seamed.encodeImage(Sam3Preprocessor.modelInput(Sam3ModelTest.scene(160, 120),
                    112));
            Detections det = seamed.detect(features, seamed.encodeText(tokenizer.tokenize("square", 32)), List.of());
            assertEquals(1, counting.trunkCalls.get());
            assertEquals(List.of(Sam3Neck.DETECTOR), counting.neckCalls);
            assertEquals(1, counting.fusionCalls.get());
            assertArrayEquals(detect("square").memory().values(), det.memory().values(), "the CPU parts behind the seam");
            assertArrayEquals(image.fpn()[0], features.fpn()[0], "the neck's CPU reference behind the seam");
            int[] which = {0, 3};
            assertArrayEquals(model.masks(detect("square"), which), seamed.masks(det, which),
                    "the mask head's CPU reference behind the seam");
            assertEquals(1, counting.maskHeadCalls.get());
            assertEquals(0, seamed.masks(det, new int[0]).length, "no query, no mask head pass");
            assertEquals(1, counting.maskHeadCalls.get());
            assertEquals("fusion encoder on test device, the rest on the CPU (fp32, 2 threads)", seamed.describe());
        }
        assertEquals(1, counting.closed.get(), "closing the model closes its backend once");
    }

    @Test
    void theVideoModelsDetectorRunsOnTheBackendItIsGiven() {
        Counting counting = new Counting();
        StateDict video = Sam3Weights.videoStateDict(Sam3Weights.TINY, Sam3Weights.TINY_TRACKER);
        try (Sam3VideoModel vm = new Sam3VideoModel(video, tokenizer, 2, counting.factory())) {
            Sam3Model detector = vm.detector();
            VisionFeatures f = detector.encodeImage(Sam3Preprocessor.modelInput(Sam3ModelTest.scene(160, 120), 112));
            detector.detect(f, detector.encodeText(tokenizer.tokenize("red circle", 32)), List.of());
            detector.trackerLevels(f);
            assertEquals(1, counting.trunkCalls.get());
            assertEquals(List.of(Sam3Neck.DETECTOR, Sam3Neck.TRACKER), counting.neckCalls, "both necks, in order");
            assertEquals(1, counting.fusionCalls.get());
        }
        assertEquals(1, counting.closed.get());
        assertEquals(1, counting.trunkClosed.get());
    }

    @Test
    void aBackendDescribesItsPartsGroupedByWhereTheyRun() {
        assertNull(Sam3Backend.describe(null, null, null, null, null));
        assertEquals("ViT trunk, necks, fusion encoder, decoder and mask head on G",
                Sam3Backend.describe("G", "G", "G", "G", "G"));
        assertEquals("ViT trunk and fusion encoder on G", Sam3Backend.describe("G", null, "G", null, null));
        assertEquals("ViT trunk on G, necks on H", Sam3Backend.describe("G", "H", null, null, null));
    }

    @Test
    void theFusionSeamsCpuReferenceIsTheDetectorsMemory() {
        Detections det = detect("red circle");
        int g = image.grid();
        try (CpuThreadPool pool = new CpuThreadPool(2);
             Sam3Fusion fusion = Sam3Fusion.cpu().open(Sam3Checkpoint.detector(sd), Sam3Weights.TINY.detector(),
                     pool)) {
            assertNull(fusion.describe());
            assertArrayEquals(det.memory().values(), fusion.forward(image.tokens(), image.pos(), g * g, det.prompt()).values());
        }
    }

    /** The CUDA encoder uploads only the prompt's valid rows: the masked softmax over all rows is the same thing. */
    @Test
    void attendingToTheValidPromptRowsAloneEqualsTheKeyPaddingMask() {
        Detections det = detect("a large blue triangle");
        Prompt padded = det.prompt();
        int d = Sam3Weights.TINY.detector().dModel();
        assertTrue(padded.validTokens() < padded.length(), "the phrase leaves padding");
        float[] rows = new float[padded.validTokens() * d];
        for (int t = 0, at = 0; t < padded.length(); t++) {
            if (!padded.padding()[t]) {
                System.arraycopy(padded.rows(), t * d, rows, at++ * d, d);
            }
        }
        Prompt valid = new Prompt(rows, new boolean[padded.validTokens()]);
        int g = image.grid();
        try (CpuThreadPool pool = new CpuThreadPool(2);
             Sam3Fusion fusion = Sam3Fusion.cpu().open(Sam3Checkpoint.detector(sd), Sam3Weights.TINY.detector(),
                     pool)) {
            assertArrayEquals(det.memory().values(), fusion.forward(image.tokens(), image.pos(), g * g, valid).values(),
                    1e-5f);
        }
    }

    @Test
    void badFusionInputsAreRefusedNamingThem() {
        Prompt prompt = detect("square").prompt();
        int g = image.grid();
        try (CpuThreadPool pool = new CpuThreadPool(1);
             Sam3Fusion fusion = Sam3Fusion.cpu().open(Sam3Checkpoint.detector(sd), Sam3Weights.TINY.detector(),
                     pool)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> fusion.forward(FeatureMap.of(new float[10]), image.pos(), g * g, prompt));
            assertTrue(e.getMessage().contains("image tokens"), e.getMessage());
            boolean[] allPadding = new boolean[prompt.length()];
            java.util.Arrays.fill(allPadding, true);
            e = assertThrows(IllegalArgumentException.class, () -> fusion.forward(image.tokens(), image.pos(), g * g,
                    new Prompt(prompt.rows(), allPadding)));
            assertTrue(e.getMessage().contains("padding"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> fusion.forward(image.tokens(), image.pos(), g * g,
                    new Prompt(new float[3], prompt.padding())));
            assertTrue(e.getMessage().contains("prompt"), e.getMessage());
        }
    }

    @Test
    void aPartThatFailsToOpenClosesWhatWasOpened() {
        AtomicInteger trunkClosed = new AtomicInteger();
        Sam3Backend.Factory failing = Sam3Backend.of((w, v, pool) -> new Sam3Trunk() {
            @Override
            public FeatureMap forward(float[] chw) {
                throw new AssertionError("not run");
            }

            @Override
            public void close() {
                trunkClosed.incrementAndGet();
            }
        }, (w, c, pool) -> {
            throw new IllegalArgumentException("no fusion encoder here");
        });
        assertThrows(IllegalArgumentException.class, () -> new Sam3Model(sd, Sam3Weights.TINY, 1, failing));
        assertEquals(1, trunkClosed.get(), "the trunk closed when the fusion encoder failed");

        // a part of the backend failing (the neck's weights gone) closes the parts opened before it
        Counting counting = new Counting();
        assertThrows(RuntimeException.class, () -> new Sam3Model(without("vision_backbone.convs."), Sam3Weights.TINY,
                1, counting.factory()));
        assertEquals(1, counting.trunkClosed.get(), "the trunk closed when the neck failed to load");
        assertEquals(0, counting.closed.get(), "the fusion encoder, after the neck, was never opened");

        // a part of the model after the backend failing to load (the decoder's weights gone) closes the backend
        Counting after = new Counting();
        assertThrows(RuntimeException.class, () -> new Sam3Model(without("transformer.decoder."), Sam3Weights.TINY,
                1, after.factory()));
        assertEquals(1, after.closed.get(), "the backend closed when the decoder failed to load");
        assertEquals(1, after.trunkClosed.get());
    }

    /** The tiny model's weights without those whose key contains {@code part}. */
    private static StateDict without(String part) {
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        for (String k : sd.keys()) {
            if (!k.contains(part)) {
                tensors.put(k, sd.get(k));
            }
        }
        return new StateDict(null, tensors);
    }

    private static Detections detect(String phrase) {
        return model.detect(image, model.encodeText(tokenizer.tokenize(phrase, 32)), List.of());
    }

    /**
     * The CPU parts behind a backend that counts the passes (the necks by prefix) and the closes, its fusion encoder
     * on "test device".
     */
    private static final class Counting {
        final AtomicInteger trunkCalls = new AtomicInteger();
        final List<String> neckCalls = new java.util.concurrent.CopyOnWriteArrayList<>();
        final AtomicInteger fusionCalls = new AtomicInteger();
        final AtomicInteger maskHeadCalls = new AtomicInteger();
        final AtomicInteger closed = new AtomicInteger();
        final AtomicInteger trunkClosed = new AtomicInteger();

        Sam3Backend.Factory factory() {
            Sam3Backend.Factory parts = Sam3Backend.of((w, v, pool) -> {
                Sam3Trunk cpu = Sam3Trunk.cpu().open(w, v, pool);
                return new Sam3Trunk() {
                    @Override
                    public FeatureMap forward(float[] chw) {
                        trunkCalls.incrementAndGet();
                        return cpu.forward(chw);
                    }

                    @Override
                    public void close() {
                        trunkClosed.incrementAndGet();
                        cpu.close();
                    }
                };
            }, (w, prefix, c, pool) -> {
                Sam3Neck cpu = Sam3Neck.cpu().open(w, prefix, c, pool);
                return new Sam3Neck() {
                    @Override
                    public FeatureMap[] forward(FeatureMap trunk) {
                        neckCalls.add(prefix);
                        return cpu.forward(trunk);
                    }

                    @Override
                    public void close() {
                        cpu.close();
                    }
                };
            }, (w, c, pool) -> {
                Sam3Fusion cpu = Sam3Fusion.cpu().open(w, c, pool);
                return new Sam3Fusion() {
                    @Override
                    public FeatureMap forward(FeatureMap img, float[] pos, int tokens, Prompt prompt) {
                        fusionCalls.incrementAndGet();
                        return cpu.forward(img, pos, tokens, prompt);
                    }

                    @Override
                    public String describe() {
                        return "test device";
                    }

                    @Override
                    public void close() {
                        closed.incrementAndGet();
                        cpu.close();
                    }
                };
            }, Sam3Decoder.cpu(), (w, c, pool) -> {
                Sam3MaskHead cpu = Sam3MaskHead.cpu().open(w, c, pool);
                return new Sam3MaskHead() {
                    @Override
                    public float[] masks(FeatureMap memory, VisionFeatures img, Prompt prompt, float[] e, int n) {
                        maskHeadCalls.incrementAndGet();
                        return cpu.masks(memory, img, prompt, e, n);
                    }

                    @Override
                    public void close() {
                        cpu.close();
                    }
                };
            });
            return parts;
        }
    }
}
