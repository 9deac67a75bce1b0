package io.samstream.gpu.sam2;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.gpu.tensor.Npy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Runs a streaming tracker over a fixture's clip as make_sam2_fixtures.py drove Meta's predictor (box for object 1 on
 * frame 0, point for object 2 on frame 5, 12 frames) and compares with what it saved: {@link Sam2VideoTracker} on a
 * {@link Sam2Model}, or any other tracker of the same frames ({@link Tracker}).
 */
final class FixtureRun {
    static final int FRAMES = 12;

    /** Tracks frame {@code t} (8-bit RGB at the model's size) with its prompts. */
    interface Tracker {
        List<ObjectResult> track(int t, byte[] rgb, List<ObjectPrompt> prompts);
    }

    final Path dir;
    final Sam2Config config;
    final int s;
    final List<List<ObjectResult>> results = new ArrayList<>();
    final List<float[]> memories = new ArrayList<>();
    FrameFeatures first;

    /** {@link Sam2VideoTracker} on a CPU (or offloaded) model. */
    private static final class OnModel implements Tracker {
        final Sam2Model model;
        final Sam2VideoTracker tracker;

        OnModel(Sam2Model model) {
            this.model = model;
            this.tracker = new Sam2VideoTracker(model);
        }

        @Override
        public List<ObjectResult> track(int t, byte[] rgb, List<ObjectPrompt> prompts) {
            return tracker.track(model.normalize(rgb), prompts);
        }
    }

    FixtureRun(Path dir, Sam2Model model) throws IOException {
        this(dir, model.config(), new OnModel(model));
    }

    /** With {@link OnModel}, also keeps frame 0's features and object 1's first two memories. */
    FixtureRun(Path dir, Sam2Config config, Tracker tracker) throws IOException {
        this.dir = dir;
        this.config = config;
        this.s = config.imageSize();
        OnModel onModel = tracker instanceof OnModel m ? m : null;
        JsonNode meta = new ObjectMapper().readTree(dir.resolve("meta.json").toFile());
        for (int t = 0; t < FRAMES; t++) {
            byte[] rgb = SyntheticClip.frame(t, s);
            assertEquals(meta.get("frame_checksums").get(t).asLong(), SyntheticClip.checksum(rgb), "frame " + t);
            List<ObjectPrompt> prompts = new ArrayList<>();
            if (t == 0) {
                JsonNode b = meta.get("box_frame0_obj1");
                prompts.add(ObjectPrompt.box(1, b.get(0).floatValue(), b.get(1).floatValue(), b.get(2).floatValue(),
                        b.get(3).floatValue()));
                if (onModel != null) {
                    first = onModel.model.encodeImage(onModel.model.normalize(rgb));
                }
            }
            if (t == 5) {
                JsonNode p = meta.get("point_frame5_obj2");
                prompts.add(ObjectPrompt.point(2, p.get(0).floatValue(), p.get(1).floatValue(), true));
            }
            results.add(tracker.track(t, rgb, prompts));
            if (onModel != null && t <= 1) {
                MemoryBank bank = onModel.tracker.bank(1);
                memories.add(t == 0 ? bank.conditioningFrames().get(0).features() : bank.tracked(1).features());
            }
        }
    }

    float[] load(String name) throws IOException {
        return Npy.read(dir.resolve(name)).toFloats();
    }

    /** The frame-0 features saved by the fixture (fpn0/fpn1 only at small sizes). */
    void checkFeatures(float tol) throws IOException {
        int f = s / 16;
        if (Files.exists(dir.resolve("fpn0_f0.npy"))) {
            assertClose("fpn0 (after conv_s0)", load("fpn0_f0.npy"), planar(first.s0(), 16 * f * f), tol);
            assertClose("fpn1 (after conv_s1)", load("fpn1_f0.npy"), planar(first.s1(), 4 * f * f), tol);
        }
        assertClose("fpn2 (top)", load("fpn2_f0.npy"), planar(first.top(), f * f), tol);
    }

    /** The memories of object 1 on frames 0 and 1 (bf16 on both sides: a rounding flip apart at most). */
    void checkMemories() throws IOException {
        int n = (s / 16) * (s / 16);
        assertClose("memory of frame 0 (conditioning)", load("maskmem_f0.npy"), planar(memories.get(0), n), 2e-2f);
        assertClose("memory of frame 1 (tracked)", load("maskmem_f1.npy"), planar(memories.get(1), n), 2e-2f);
    }

    /**
     * Every frame and object: object-score sign equal and within {@code scoreTol}, pointer cosine >= 0.999, mask
     * IoU >= 0.99 at the model's size (the fixture's masks, or where it has none, its logits resized the same way).
     */
    String checkFrames(double scoreTol) throws IOException {
        return checkFrames(scoreTol, 0.99, 0.999);
    }

    /** As above with the mask IoU and pointer cosine a run must reach (the GPU's bf16: lower). */
    String checkFrames(double scoreTol, double minIou, double minCos) throws IOException {
        float[] scores = load("object_scores.npy");
        float[] ptrs = load("object_pointers.npy");
        float[] low = load("lowres_logits.npy");
        byte[] packed = Files.exists(dir.resolve("masks_packed.npy"))
                ? Npy.read(dir.resolve("masks_packed.npy")).raw() : null;
        int l = s / 4;
        int c = config.hidden();
        StringBuilder report = new StringBuilder();
        double worstIou = 1;
        double worstCos = 1;
        double maxScoreDiff = 0;
        double maxLogitDiff = 0;
        int visible = 0;
        for (int t = 0; t < FRAMES; t++) {
            List<ObjectResult> frame = results.get(t);
            assertEquals(t < 5 ? 1 : 2, frame.size(), "objects on frame " + t);
            for (ObjectResult r : frame) {
                int o = r.objectId() - 1;
                int at = t * 2 + o;
                float refScore = scores[at];
                assertEquals(refScore > 0, r.objectScore() > 0, "score sign, frame " + t + " object " + r.objectId());
                visible += r.visible() ? 1 : 0;
                maxScoreDiff = Math.max(maxScoreDiff, Math.abs(refScore - r.objectScore()));
                float[] refPtr = new float[c];
                System.arraycopy(ptrs, at * c, refPtr, 0, c);
                double cos = cosine(refPtr, r.objectPointer());
                worstCos = Math.min(worstCos, cos);
                float[] refLow = new float[l * l];
                System.arraycopy(low, at * l * l, refLow, 0, l * l);
                for (int i = 0; i < l * l; i++) {
                    maxLogitDiff = Math.max(maxLogitDiff, Math.abs(refLow[i] - r.lowResLogits()[i]));
                }
                boolean[] mine = r.mask(s, s);
                boolean[] ref = packed != null ? unpack(packed, at * s * s, s * s)
                        : new ObjectResult(0, refLow, l, refScore, refPtr, false).mask(s, s);
                int inter = 0;
                int union = 0;
                for (int i = 0; i < s * s; i++) {
                    inter += ref[i] && mine[i] ? 1 : 0;
                    union += ref[i] || mine[i] ? 1 : 0;
                }
                double iou = union == 0 ? 1 : (double) inter / union;
                worstIou = Math.min(worstIou, iou);
                report.append(String.format(Locale.ROOT, "frame %2d object %d: score %.5f (ref %.5f) IoU %.5f "
                        + "cos %.7f area %d%n", t, r.objectId(), r.objectScore(), refScore, iou, cos, union));
            }
        }
        String summary = String.format(Locale.ROOT, "%s: worst mask IoU %.5f, worst pointer cosine %.7f, max |score "
                + "diff| %.2e, max |low-res logit diff| %.2e, %d of 19 object-frames visible%n", dir.getFileName(),
                worstIou, worstCos, maxScoreDiff, maxLogitDiff, visible);
        System.out.println(summary + report);
        assertTrue(worstIou >= minIou, summary + report);
        assertTrue(worstCos >= minCos, summary + report);
        assertTrue(maxScoreDiff <= scoreTol, summary + report);
        return summary;
    }

    static boolean[] unpack(byte[] packed, int start, int n) {
        boolean[] out = new boolean[n];
        for (int i = 0; i < n; i++) {
            int bit = start + i;
            out[i] = ((packed[bit >> 3] >> (7 - (bit & 7))) & 1) != 0;
        }
        return out;
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
