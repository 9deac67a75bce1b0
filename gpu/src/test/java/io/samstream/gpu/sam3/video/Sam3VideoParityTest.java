package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.sam2.DeterministicWeights;
import io.samstream.gpu.sam3.Sam3Weights;
import io.samstream.gpu.sam3.VisionFeatures;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import io.samstream.gpu.tensor.Npy;
import io.samstream.gpu.tensor.NpyArray;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The streaming video path against Meta's video model on the tiny fixture (tools/sam3_fixtures/
 * make_sam3_video_fixtures.py): 8 generated frames, one phrase per session, random deterministic weights
 * regenerated from the fixture's key list with the session's overrides (the first shifts the tracker's object-score
 * head to +0.5 so tracked objects are present and propagate; the second leaves every tracked object absent).
 *
 * <p>What is compared, and why it is comparable: Meta's predictor processes a finite video in a session; the fixture
 * runs it as a stream would be run - {@code add_prompt} on frame 0, then {@code propagate_in_video} forward from
 * frame 1 - so each frame is processed once, in order, detection on every frame. Our stream steps the same model
 * inputs with the same thresholds (the fixture's, per phrase), Meta's other heuristics at their values, and the
 * pointer window Meta's session uses for a clip of 8 frames (min(16, 8)). Within 8 frames no hot-start removal can
 * happen (it needs 8 unmatched frames) and re-conditioning (frame 0 only) finds no track, so Meta's hot-start delay
 * (outputs held back 15 frames) does not change what either side shows. Per phrase and frame: the detections'
 * scores first (so that a detector difference is named as one), then the published objects: the same ids (both
 * count from 0 in creation order), scores within 1e-4, mask IoU at least 0.99 (two empty masks agree), boxes within
 * a pixel.
 */
class Sam3VideoParityTest {
    static final Path DIR = Path.of("src/test/resources/fixtures/sam3/video");

    private static void assumeFixture() {
        Assumptions.assumeTrue(Files.isRegularFile(DIR.resolve("meta.json")), "no SAM 3 video fixture yet in " + DIR
                + ": made by tools/sam3_fixtures/make_sam3_video_fixtures.py (see its README)");
    }

    /** Meta's video model has exactly the tensors (names and shapes) that Sam3Shapes gives sam3.pt's keys. */
    @Test
    void fixtureKeysAreTheVideoModelsOfSam3Shapes() throws IOException {
        assumeFixture();
        Map<String, String> meta = new TreeMap<>();
        for (String line : Files.readAllLines(DIR.resolve("keys.txt"))) {
            if (!line.isBlank()) {
                String[] parts = line.trim().split(" ");
                meta.put(parts[0], parts[1]);
            }
        }
        StateDict ours = Sam3Weights.videoStateDict(Sam3Weights.TINY, Sam3Weights.TINY_TRACKER);
        assertEquals(meta.keySet(), new TreeSet<>(ours.keys()), "sam3.pt's keys (Meta's video model) against ours");
        for (String key : ours.keys()) {
            String shape = Arrays.stream(ours.get(key).shape()).mapToObj(String::valueOf)
                    .collect(Collectors.joining(","));
            assertEquals(meta.get(key), shape, "shape of " + key);
        }
    }

    @Test
    void streamingPathMatchesMetasVideoModelOnTheTinyClip() throws IOException {
        assumeFixture();
        JsonNode meta = new ObjectMapper().readTree(DIR.resolve("meta.json").toFile());
        int frames = meta.get("frames").asInt();
        int h = meta.get("frame_hw").get(0).asInt();
        int w = meta.get("frame_hw").get(1).asInt();
        int s = meta.get("image_size").asInt();
        float[] inputs = Npy.read(DIR.resolve("model_inputs.npy")).toFloats();
        int per = 3 * s * s;
        List<String> report = new ArrayList<>();
        Sam3Tokenizer tokenizer = Sam3Tokenizer.load(ConceptTrackingTest.VOCAB);
        JsonNode phrases = meta.get("phrases");
        for (int p = 0; p < phrases.size(); p++) {
            JsonNode ph = phrases.get(p);
            StateDict sd = DeterministicWeights.fromKeyList(DIR.resolve("keys.txt"), overrides(ph));
            try (Sam3VideoModel model = new Sam3VideoModel(sd, tokenizer, 2)) {
                assertEquals(Sam3Weights.TINY_TRACKER, model.tracker().config(),
                        "the fixture's tracker is the tiny one");
                Concept concept = Concept.of(ph.get("text").asText());
                Sam3VideoSettings settings = Sam3VideoSettings.defaults()
                        .withThresholds((float) ph.get("detection_threshold").asDouble(),
                                (float) ph.get("new_detection_threshold").asDouble())
                        .withPointerWindow(meta.get("pointer_window").asInt());
                Sam3ConceptDetector detector = new Sam3ConceptDetector(model.detector(), model.tokenizer(),
                        settings.detectionThreshold(), settings.nmsIou());
                Sam3VideoTracker stream = model.openStream(settings);
                for (int t = 0; t < frames; t++) {
                    float[] input = Arrays.copyOfRange(inputs, t * per, (t + 1) * per);
                    String where = concept + " frame " + t;
                    VisionFeatures vision = model.detector().encodeImage(input);
                    float[] detScores = Npy.read(DIR.resolve("p" + p + "_f" + t + "_det_scores.npy")).toFloats();
                    List<Detection> dets = detector.detect(vision, concept, t == 0);
                    assertEquals(detScores.length, dets.size(), where + ": detections");
                    for (int d = 0; d < dets.size(); d++) {
                        assertEquals(detScores[d], dets.get(d).score(), 1e-4f, where + ": detection " + d);
                    }
                    VideoStep step = stream.step(input, w, h, List.of(concept));
                    compare(p, t, step, w, h, where, report);
                }
            } finally {
                report.forEach(System.out::println);
                report.clear();
            }
        }
    }

    /** A session's weight overrides (meta.json: tensor name -> the one value it is filled with). */
    private static Map<String, Float> overrides(JsonNode phrase) {
        Map<String, Float> out = new HashMap<>();
        if (phrase.has("overrides")) {
            phrase.get("overrides").fields()
                    .forEachRemaining(e -> out.put(e.getKey(), (float) e.getValue().asDouble()));
        }
        return out;
    }

    private static void compare(int p, int t, VideoStep step, int w, int h, String where, List<String> report)
            throws IOException {
        String pre = "p" + p + "_f" + t + "_";
        long[] ids = Npy.read(DIR.resolve(pre + "ids.npy")).toLongs();
        float[] probs = Npy.read(DIR.resolve(pre + "probs.npy")).toFloats();
        float[] boxes = Npy.read(DIR.resolve(pre + "boxes.npy")).toFloats();
        NpyArray packed = Npy.read(DIR.resolve(pre + "masks.npy"));
        boolean[] bits = unpack(packed.raw(), ids.length * w * h);
        long[] ours = step.objects().stream().mapToLong(TrackedObject::id).toArray();
        report.add(where + ": Meta " + Arrays.toString(ids) + ", ours " + Arrays.toString(ours));
        assertArrayEquals(ids, ours, where + ": object ids");
        for (int i = 0; i < ids.length; i++) {
            TrackedObject o = step.objects().get(i);
            assertEquals(probs[i], o.score(), 1e-4f, where + ": score of " + ids[i]);
            boolean[] theirs = Arrays.copyOfRange(bits, i * w * h, (i + 1) * w * h);
            int theirArea = area(theirs);
            int ourArea = area(o.mask());
            // two empty masks agree (an object kept with its mask suppressed by an overlapping one)
            float iou = theirArea + ourArea == 0 ? 1f : PackedMask.of(theirs).iou(PackedMask.of(o.mask()));
            report.add(where + ": object " + ids[i] + " mask IoU " + iou + " (areas " + theirArea + " / " + ourArea
                    + "), score " + probs[i] + " / " + o.score());
            assertTrue(iou >= 0.99f, where + ": mask IoU of " + ids[i] + " is " + iou);
            int x0 = Math.round(boxes[4 * i] * w);
            int y0 = Math.round(boxes[4 * i + 1] * h);
            int[] expected = {x0, y0, x0 + Math.round(boxes[4 * i + 2] * w) + 1,
                y0 + Math.round(boxes[4 * i + 3] * h) + 1};
            for (int k = 0; k < 4; k++) {
                assertEquals(expected[k], o.box()[k], 1, where + ": box of " + ids[i] + " " + Arrays.toString(o.box())
                        + " vs " + Arrays.toString(expected));
            }
        }
    }

    private static int area(boolean[] mask) {
        int n = 0;
        for (boolean b : mask) {
            n += b ? 1 : 0;
        }
        return n;
    }

    /** np.packbits' bits (big-endian within a byte) back to booleans. */
    static boolean[] unpack(byte[] packed, int n) {
        boolean[] out = new boolean[n];
        for (int i = 0; i < n; i++) {
            out[i] = ((packed[i >> 3] >> (7 - (i & 7))) & 1) != 0;
        }
        return out;
    }
}
