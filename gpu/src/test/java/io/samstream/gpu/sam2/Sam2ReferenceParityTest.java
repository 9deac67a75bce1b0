package io.samstream.gpu.sam2;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.tensor.Npy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The streaming CPU reference against Meta's SAM2VideoPredictor on the tiny fixture
 * (tools/sam2_fixtures/make_sam2_fixtures.py): 12 frames, object 1 from a box on frame 0, object 2 from a point
 * on frame 5. Bounds: per-frame mask IoU >= 0.99, object-score sign equal (and within 1e-3), pointer cosine >=
 * 0.999, plus the frame-0 features and the first memories.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class Sam2ReferenceParityTest {
    static final Path DIR = Path.of("src/test/resources/fixtures/sam2/tiny");
    static final Sam2Config.Layout TINY = new Sam2Config.Layout("tiny fixture", 1, new int[] {2},
            new int[] {8, 4, 6, 2}, 128, 2);
    static final int FRAMES = 12;

    private Sam2Model model;
    private final List<List<ObjectResult>> results = new ArrayList<>();
    private final List<float[]> memories = new ArrayList<>();
    private FrameFeatures first;
    private int s;

    @BeforeAll
    void run() throws IOException {
        Assumptions.assumeTrue(Files.isDirectory(DIR), "no SAM 2 fixture at " + DIR);
        StateDict sd = CheckpointLoader.load(DIR.resolve("checkpoint.pt"));
        Sam2Config config = Sam2ConfigInference.infer(sd, TINY);
        model = new Sam2Model(sd, config, Math.max(2, Runtime.getRuntime().availableProcessors()));
        s = config.imageSize();
        JsonNode meta = new ObjectMapper().readTree(DIR.resolve("meta.json").toFile());
        Sam2VideoTracker tracker = new Sam2VideoTracker(model);
        for (int t = 0; t < FRAMES; t++) {
            byte[] rgb = SyntheticClip.frame(t, s);
            assertEquals(meta.get("frame_checksums").get(t).asLong(), SyntheticClip.checksum(rgb), "frame " + t);
            float[] image = model.normalize(rgb);
            List<ObjectPrompt> prompts = new ArrayList<>();
            if (t == 0) {
                JsonNode b = meta.get("box_frame0_obj1");
                prompts.add(ObjectPrompt.box(1, b.get(0).floatValue(), b.get(1).floatValue(), b.get(2).floatValue(),
                        b.get(3).floatValue()));
                first = model.encodeImage(image);
            }
            if (t == 5) {
                JsonNode p = meta.get("point_frame5_obj2");
                prompts.add(ObjectPrompt.point(2, p.get(0).floatValue(), p.get(1).floatValue(), true));
            }
            results.add(tracker.track(image, prompts));
            if (t <= 1) {
                MemoryBank bank = tracker.bank(1);
                memories.add(t == 0 ? bank.conditioningFrames().get(0).features() : bank.tracked(1).features());
            }
        }
    }

    @AfterAll
    void close() {
        if (model != null) {
            model.close();
        }
    }

    @Test
    void frameMatchesTheFixturesClip() throws IOException {
        byte[] expected = Npy.read(DIR.resolve("frame0_rgb.npy")).raw();
        assertArrayEquals(expected, SyntheticClip.frame(0, s));
    }

    @Test
    void imageFeaturesOfFrameZero() throws IOException {
        int f = s / 16;
        assertClose("fpn0 (after conv_s0)", load("fpn0_f0.npy"), planar(first.s0(), 4 * f * 4 * f), 2e-4f);
        assertClose("fpn1 (after conv_s1)", load("fpn1_f0.npy"), planar(first.s1(), 2 * f * 2 * f), 2e-4f);
        assertClose("fpn2 (top)", load("fpn2_f0.npy"), planar(first.top(), f * f), 2e-4f);
    }

    @Test
    void firstMemories() throws IOException {
        int n = (s / 16) * (s / 16);
        // bf16-rounded on both sides: one rounding step (2^-8 relative) apart at most
        assertClose("memory of frame 0 (conditioning)", load("maskmem_f0.npy"), planar(memories.get(0), n), 2e-2f);
        assertClose("memory of frame 1 (tracked)", load("maskmem_f1.npy"), planar(memories.get(1), n), 2e-2f);
    }

    @Test
    void everyFrameAndObject() throws IOException {
        float[] scores = load("object_scores.npy");
        float[] ptrs = load("object_pointers.npy");
        float[] low = load("lowres_logits.npy");
        byte[] packed = Npy.read(DIR.resolve("masks_packed.npy")).raw();
        int l = s / 4;
        int c = model.config().hidden();
        StringBuilder report = new StringBuilder();
        double worstIou = 1;
        double worstCos = 1;
        double maxScoreDiff = 0;
        double maxLogitDiff = 0;
        for (int t = 0; t < FRAMES; t++) {
            List<ObjectResult> frame = results.get(t);
            assertEquals(t < 5 ? 1 : 2, frame.size(), "objects on frame " + t);
            for (ObjectResult r : frame) {
                int o = r.objectId() - 1;
                float refScore = scores[t * 2 + o];
                assertEquals(refScore > 0, r.objectScore() > 0, "score sign, frame " + t + " object " + r.objectId());
                maxScoreDiff = Math.max(maxScoreDiff, Math.abs(refScore - r.objectScore()));
                float[] refPtr = new float[c];
                System.arraycopy(ptrs, (t * 2 + o) * c, refPtr, 0, c);
                double cos = cosine(refPtr, r.objectPointer());
                worstCos = Math.min(worstCos, cos);
                for (int i = 0; i < l * l; i++) {
                    maxLogitDiff = Math.max(maxLogitDiff, Math.abs(low[(t * 2 + o) * l * l + i] - r.lowResLogits()[i]));
                }
                boolean[] mine = r.mask(s, s);
                int inter = 0;
                int union = 0;
                for (int i = 0; i < s * s; i++) {
                    int bit = (t * 2 + o) * s * s + i;
                    boolean ref = ((packed[bit >> 3] >> (7 - (bit & 7))) & 1) != 0;
                    inter += ref && mine[i] ? 1 : 0;
                    union += ref || mine[i] ? 1 : 0;
                }
                double iou = union == 0 ? 1 : (double) inter / union;
                worstIou = Math.min(worstIou, iou);
                report.append(String.format(Locale.ROOT, "frame %2d object %d: score %.5f (ref %.5f) IoU %.5f cos %.7f%n",
                        t, r.objectId(), r.objectScore(), refScore, iou, cos));
            }
        }
        String summary = String.format(Locale.ROOT,
                "worst IoU %.5f, worst pointer cosine %.7f, max |score diff| %.2e, max |logit diff| %.2e%n", worstIou,
                worstCos, maxScoreDiff, maxLogitDiff);
        System.out.println(summary + report);
        assertTrue(worstIou >= 0.99, summary + report);
        assertTrue(worstCos >= 0.999, summary + report);
        assertTrue(maxScoreDiff <= 1e-3, summary + report);
    }

    private float[] load(String name) throws IOException {
        return Npy.read(DIR.resolve(name)).toFloats();
    }

    /** Channels-last [n, c] to planar [c, n]. */
    static float[] planar(float[] x, int n) {
        int c = x.length / n;
        float[] out = new float[x.length];
        for (int i = 0; i < n; i++) {
            for (int ch = 0; ch < c; ch++) {
                out[ch * n + i] = x[i * c + ch];
            }
        }
        return out;
    }

    static void assertClose(String what, float[] expected, float[] actual, float relTol) {
        assertEquals(expected.length, actual.length, what + " size");
        double maxAbs = 0;
        double maxRef = 0;
        for (int i = 0; i < expected.length; i++) {
            maxAbs = Math.max(maxAbs, Math.abs(expected[i] - actual[i]));
            maxRef = Math.max(maxRef, Math.abs(expected[i]));
        }
        System.out.printf(Locale.ROOT, "%s: max |diff| %.3e (max |ref| %.3f)%n", what, maxAbs, maxRef);
        assertTrue(maxAbs <= relTol * Math.max(1, maxRef), what + ": max |diff| " + maxAbs + " over " + relTol + " x "
                + maxRef);
    }

    static double cosine(float[] a, float[] b) {
        double ab = 0;
        double aa = 0;
        double bb = 0;
        for (int i = 0; i < a.length; i++) {
            ab += (double) a[i] * b[i];
            aa += (double) a[i] * a[i];
            bb += (double) b[i] * b[i];
        }
        return ab / Math.sqrt(aa * bb);
    }
}
