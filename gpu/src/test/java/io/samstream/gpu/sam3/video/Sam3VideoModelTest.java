package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.CheckpointException;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.sam2.FrameFeatures;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Sam3Backend;
import io.samstream.gpu.sam3.Sam3Checkpoint;
import io.samstream.gpu.sam3.Sam3ConfigInference;
import io.samstream.gpu.sam3.Sam3Weights;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The real tracker at the tiny configuration with the fixtures' deterministic weights. */
class Sam3VideoModelTest {
    static StateDict sd;
    static Sam3VideoModel model;
    static FrameFeatures features;
    static float[] input;

    @BeforeAll
    static void build() {
        sd = Sam3Weights.videoStateDict(Sam3Weights.TINY, Sam3Weights.TINY_TRACKER);
        model = new Sam3VideoModel(sd, Sam3Tokenizer.load(ConceptTrackingTest.VOCAB), 2);
        input = new float[3 * 112 * 112];
        for (int i = 0; i < input.length; i++) {
            input[i] = (float) Math.sin(i * 0.01);
        }
        features = model.tracker().features(model.detector().pool(),
                FeatureMap.values(model.detector().trackerLevels(model.detector().encodeImage(input))));
    }

    @AfterAll
    static void close() {
        model.close();
    }

    @Test
    void theTrackerConfigurationIsReadFromTheShapes() {
        assertEquals(Sam3Weights.TINY_TRACKER, Sam3ConfigInference.inferTracker(sd, Sam3Weights.TINY));
    }

    @Test
    void anImageModelHasNoTrackerAndTheErrorSaysSo() {
        StateDict image = Sam3Weights.stateDict(Sam3Weights.TINY);
        CheckpointException e = assertThrows(CheckpointException.class, () -> Sam3Checkpoint.tracker(image));
        assertTrue(e.getMessage().contains("video model"), e.getMessage());
        Map<String, Tensor> broken = new LinkedHashMap<>();
        for (String k : sd.keys()) {
            if (!k.equals("tracker.sam_prompt_encoder.mask_downscaling.3.weight")) {
                broken.put(k, sd.get(k));
            }
        }
        CheckpointException missing = assertThrows(CheckpointException.class, () -> Sam3ConfigInference
                .inferTracker(new StateDict(Path.of("broken.pt"), broken), Sam3Weights.TINY));
        assertTrue(missing.getMessage().contains("mask_downscaling.3.weight"), missing.getMessage());
    }

    @Test
    void anEmptyMaskMakesTheNoObjectPointer() {
        boolean[] empty = new boolean[128 * 128];
        float[] expected = sd.get("tracker.no_obj_ptr").data();
        assertArrayEquals(expected, model.tracker().pointerFromMask(model.detector().pool(), features, empty));
        boolean[] box = ConceptTrackingTest.maskBox(128, 30, 30, 90, 80);
        assertEquals(32, model.tracker().pointerFromMask(model.detector().pool(), features, box).length);
    }

    @Test
    void memoryFeaturesAreStoredInBf16AndAbsenceAddsTheNoObjectEmbedding() {
        float[] mask = new float[128 * 128];
        java.util.Arrays.fill(mask, -10f);
        float[] present = model.tracker().encodeMemory(model.detector().pool(), features, mask, true).values();
        float[] absent = model.tracker().encodeMemory(model.detector().pool(), features, mask, false).values();
        assertEquals(8 * 8 * 8, present.length);
        for (float v : present) {
            assertEquals(0, Float.floatToRawIntBits(v) & 0xFFFF, "bf16: " + v);
        }
        assertNotEquals(present[0], absent[0]);
    }

    @Test
    void aStreamOnTheRealTrackerIsDeterministicBoundedAndIndependentOfAnother() {
        ScriptedDetector d1 = ScriptedDetector.moving(32, Map.of("red circle", new ScriptedDetector.Box(6, 6, 16, 16,
                0.9f)), 0, 0);
        ScriptedDetector d2 = ScriptedDetector.moving(32, Map.of("red circle", new ScriptedDetector.Box(6, 6, 16, 16,
                0.9f)), 0, 0);
        Sam3VideoSettings s = Sam3VideoSettings.withoutTemporalDisambiguation();
        Sam3VideoTracker a = model.openStream(s, d1);
        Sam3VideoTracker b = model.openStream(s, d2);
        long bound = 4 * 8 * 8 * 8 + 7L * 8 * 8 * 8 + 20L * 32;
        for (int t = 0; t < 24; t++) {
            d1.frame = t;
            d2.frame = t;
            VideoStep sa = a.step(input, 40, 30, List.of(Concept.of("red circle")));
            VideoStep sb = b.step(input, 40, 30, List.of(Concept.of("red circle")));
            assertEquals(sa.objects().size(), sb.objects().size(), "frame " + t);
            for (int i = 0; i < sa.objects().size(); i++) {
                assertArrayEquals(sa.objects().get(i).mask(), sb.objects().get(i).mask(), "frame " + t);
                assertEquals(sa.objects().get(i).trackerScore(), sb.objects().get(i).trackerScore());
            }
            assertTrue(a.heldFloats() <= a.objectCount() * bound, "frame " + t + ": " + a.heldFloats());
        }
        assertTrue(a.objectCount() >= 1);
    }

    /**
     * Streams of one model step side by side (the engine runs a batch's streams in parallel) as they do alone: the
     * same objects under the same ids, the same masks.
     */
    @Test
    void streamsSteppingSideBySideGiveWhatEachGivesAlone() throws Exception {
        Sam3VideoSettings s = Sam3VideoSettings.withoutTemporalDisambiguation();
        int frames = 12;
        List<List<VideoStep>> alone = new java.util.ArrayList<>();
        for (int k = 0; k < 3; k++) {
            ScriptedDetector d = detector(k);
            alone.add(run(model.openStream(s, d), d, frames));
        }
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(3);
        try {
            List<java.util.concurrent.Future<List<VideoStep>>> together = new java.util.ArrayList<>();
            for (int k = 0; k < 3; k++) {
                ScriptedDetector d = detector(k);
                Sam3VideoTracker stream = model.openStream(s, d);
                together.add(threads.submit(() -> run(stream, d, frames)));
            }
            for (int k = 0; k < 3; k++) {
                List<VideoStep> a = alone.get(k), b = together.get(k).get();
                assertTrue(a.stream().anyMatch(v -> !v.objects().isEmpty()), "stream " + k + " shows its object");
                for (int t = 0; t < frames; t++) {
                    List<TrackedObject> oa = a.get(t).objects(), ob = b.get(t).objects();
                    assertEquals(oa.size(), ob.size(), "stream " + k + " frame " + t);
                    for (int i = 0; i < oa.size(); i++) {
                        assertEquals(oa.get(i).id(), ob.get(i).id(), "stream " + k + " frame " + t);
                        // a pixel at logit 0 is no evidence either way; another stream's state mixed in would move
                        // whole masks
                        double iou = io.samstream.testkit.CocoMasks.iou(oa.get(i).mask(), ob.get(i).mask());
                        assertTrue(iou >= 0.99, "stream " + k + " frame " + t + ": mask IoU " + iou);
                    }
                }
            }
        } finally {
            threads.shutdownNow();
        }
    }

    /**
     * The real detector and tracker, the detection beside the propagation and after it: the same objects under the
     * same ids, the same masks and scores, frame for frame (the two read the frame and nothing of each other).
     */
    @Test
    void theDetectionBesideThePropagationGivesWhatItGivesAfterIt() {
        Sam3VideoSettings s = Sam3VideoSettings.withoutTemporalDisambiguation().withThresholds(0.05f, 0.05f);
        List<Concept> concepts = List.of(Concept.of("red circle"), Concept.of("square"));
        try (Sam3VideoModel serial = new Sam3VideoModel(sd, model.tokenizer(), 2, Sam3Backend.cpu(),
                TrackerPasses.Factory.cpu(), false)) {
            assertTrue(model.overlap().overlaps() && !serial.overlap().overlaps());
            Sam3VideoTracker beside = model.openStream(s);
            Sam3VideoTracker after = serial.openStream(s);
            int shown = 0;
            for (int t = 0; t < 6; t++) {
                float[] frame = new float[input.length];
                for (int i = 0; i < frame.length; i++) {
                    frame[i] = (float) Math.sin(i * 0.01 + t * 0.3);
                }
                VideoStep a = beside.step(frame, 40, 30, concepts);
                VideoStep b = after.step(frame, 40, 30, concepts);
                assertSameStep(b, a);
                shown += a.objects().size();
            }
            assertTrue(shown > 0, "the random detector finds something at these thresholds");
            assertEquals(after.detectionFrames(), beside.detectionFrames());
        }
    }

    /**
     * A stream's next frame encoded ahead on another thread while the current one steps (as the engine does for a
     * batch's frames of one stream) gives what encoding in the step gives, exactly; a frame encoded ahead is stepped
     * once.
     */
    @Test
    void framesEncodedAheadStepAsFramesEncodedInTheStep() throws Exception {
        Sam3VideoSettings s = Sam3VideoSettings.withoutTemporalDisambiguation().withThresholds(0.05f, 0.05f);
        List<Concept> concepts = List.of(Concept.of("red circle"), Concept.of("square"));
        int frames = 6, w = 40, h = 30;
        io.samstream.gpu.image.RgbImage[] clip = new io.samstream.gpu.image.RgbImage[frames];
        for (int t = 0; t < frames; t++) {
            byte[] rgb = new byte[w * h * 3];
            for (int i = 0; i < rgb.length; i++) {
                rgb[i] = (byte) (128 + 127 * Math.sin(i * 0.05 + t * 0.4));
            }
            clip[t] = new io.samstream.gpu.image.RgbImage(w, h, rgb);
        }
        Sam3VideoTracker plain = model.openStream(s);
        Sam3VideoTracker ahead = model.openStream(s);
        java.util.concurrent.ExecutorService encoder = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            java.util.concurrent.Future<Sam3VideoTracker.Encoded> next = encoder.submit(() -> ahead.encode(clip[0]));
            int shown = 0;
            for (int t = 0; t < frames; t++) {
                Sam3VideoTracker.Encoded mine = next.get();
                if (t + 1 < frames) {
                    io.samstream.gpu.image.RgbImage following = clip[t + 1];
                    next = encoder.submit(() -> ahead.encode(following));
                }
                VideoStep b = ahead.step(mine, concepts);
                VideoStep a = plain.step(clip[t], concepts);
                assertThrows(IllegalStateException.class, () -> ahead.step(mine, concepts), "stepped once");
                mine.close(); // a no-op once stepped
                assertSameStep(a, b);
                shown += a.objects().size();
            }
            assertTrue(shown > 0, "the random detector finds something at these thresholds");
            assertEquals(plain.nextFrame(), ahead.nextFrame());
            // encoded ahead, then not looked at (no concepts): the step moves on and lets the features go
            try (Sam3VideoTracker.Encoded idle = ahead.encode(clip[0])) {
                assertTrue(ahead.step(idle, List.of()).objects().isEmpty());
            }
        } finally {
            encoder.shutdownNow();
            plain.close();
            ahead.close();
        }
    }

    /** A detector's failure ends the step with the detector's own error, not one wrapped by the helper thread. */
    @Test
    void aDetectorsFailureReachesTheStepUnwrapped() {
        ConceptDetector failing = (image, concept, first) -> {
            throw new IllegalArgumentException("no text features for '" + concept.phrase() + "'");
        };
        Sam3VideoTracker stream = model.openStream(Sam3VideoSettings.defaults(), failing);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> stream.step(input, 40, 30, List.of(Concept.of("red circle"))));
        assertEquals("no text features for 'red circle'", e.getMessage());
        stream.close();
    }

    /** The same frame, ids, hidden, lost and dropped ids, and per object the same concept, scores, box and mask. */
    private static void assertSameStep(VideoStep expected, VideoStep actual) {
        String at = "frame " + expected.frame();
        assertEquals(expected.frame(), actual.frame());
        assertEquals(expected.hidden(), actual.hidden(), at);
        assertEquals(expected.lost(), actual.lost(), at);
        assertEquals(expected.dropped(), actual.dropped(), at);
        assertEquals(expected.objects().size(), actual.objects().size(), at);
        for (int i = 0; i < expected.objects().size(); i++) {
            TrackedObject x = expected.objects().get(i), y = actual.objects().get(i);
            assertEquals(x.id(), y.id(), at);
            assertEquals(x.concept(), y.concept(), at);
            assertEquals(x.score(), y.score(), at);
            assertEquals(x.trackerScore(), y.trackerScore(), at);
            assertArrayEquals(x.box(), y.box(), at);
            assertArrayEquals(x.mask(), y.mask(), at);
        }
    }

    /** Stream k's detections: a box of its own place moving right, inside the frame throughout. */
    private static ScriptedDetector detector(int k) {
        return ScriptedDetector.moving(32, Map.of("red circle", new ScriptedDetector.Box(2 + 3 * k, 4 + 4 * k, 10 + 3 * k,
                12 + 4 * k, 0.9f)), 1, 0);
    }

    private static List<VideoStep> run(Sam3VideoTracker stream, ScriptedDetector d, int frames) {
        List<VideoStep> steps = new java.util.ArrayList<>();
        for (int t = 0; t < frames; t++) {
            d.frame = t;
            steps.add(stream.step(input, 40, 30, List.of(Concept.of("red circle"))));
        }
        return steps;
    }
}
