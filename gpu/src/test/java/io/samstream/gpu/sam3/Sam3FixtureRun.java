package io.samstream.gpu.sam3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.tensor.Npy;
import io.samstream.gpu.tensor.NpyArray;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One fixture of tools/sam3_fixtures/make_sam3_fixtures.py replayed through the CPU reference: the model input Meta
 * made goes through our image encoder, each prompt's token ids through our text encoder and detector, and every
 * saved tensor is compared, the intermediate ones first so that a failure names the first part that differs.
 * Criteria of issue #33: scores within 1e-4, boxes within 0.5 px, mask IoU at least 0.99, presence of equal sign.
 */
final class Sam3FixtureRun {
    private final Path dir;
    private final Sam3Model model;
    final JsonNode meta;
    private final int height;
    private final int width;
    private final List<String> report = new ArrayList<>();

    Sam3FixtureRun(Path dir, Sam3Model model) throws IOException {
        this.dir = dir;
        this.model = model;
        this.meta = new ObjectMapper().readTree(dir.resolve("meta.json").toFile());
        this.height = meta.get("image_hw").get(0).asInt();
        this.width = meta.get("image_hw").get(1).asInt();
    }

    float[] floats(String name) throws IOException {
        return Npy.read(dir.resolve(name + ".npy")).toFloats();
    }

    /** Whether the fixture has this tensor (the release shapes leave the large maps out). */
    boolean has(String name) {
        return java.nio.file.Files.isRegularFile(dir.resolve(name + ".npy"));
    }

    long[] longs(String name) throws IOException {
        return Npy.read(dir.resolve(name + ".npy")).toLongs();
    }

    /** Our pre-processing of image.npy against Meta's model input: at most one 8-bit step apart. */
    void checkPreprocessing() throws IOException {
        NpyArray img = Npy.read(dir.resolve("image.npy"));
        RgbImage rgb = new RgbImage(width, height, img.raw());
        float[] ours = Sam3Preprocessor.modelInput(rgb, model.config().vision().imageSize());
        float worst = maxAbs(floats("model_input"), ours);
        report.add("pre-processing: max |diff| " + worst);
        assertTrue(worst <= 2f / 255 + 1e-6f, "model input differs by " + worst + " (more than one 8-bit step)");
    }

    /** Image features from Meta's model input, compared level by level. */
    VisionFeatures checkImage(float tolerance) throws IOException {
        VisionFeatures f = model.encodeImage(floats("model_input"));
        int g = f.grid();
        if (has("trunk")) {
            compare("trunk", channelsLast(floats("trunk"), g * g), f.trunk().values(), tolerance);
        }
        for (int i = 0; i < 3; i++) {
            int side = g << (2 - i);
            if (has("fpn" + i)) {
                compare("fpn" + i, channelsLast(floats("fpn" + i), side * side), f.fpn()[i], tolerance);
            }
        }
        return f;
    }

    /** Every prompt of the fixture on the image. */
    void checkPrompts(VisionFeatures image, float tolerance) throws IOException {
        JsonNode prompts = meta.get("prompts");
        int q = model.config().detector().queries();
        for (int i = 0; i < prompts.size(); i++) {
            JsonNode p = prompts.get(i);
            String pre = "p" + i + "_";
            String label = "prompt " + i + " '" + p.get("text").asText() + "'";
            int[] tokens = toInts(longs(pre + "tokens"));
            TextFeatures text = model.encodeText(tokens);
            compare(label + " text", floats(pre + "text"), text.rows(), tolerance);
            boolean[] pad = Npy.read(dir.resolve(pre + "text_mask.npy")).toBooleans();
            assertArrayEquals(pad, text.padding(), label + " padding");
            Detections det = model.detect(image, text, FixturePrompts.boxes(p));
            if (has(pre + "memory")) {
                compare(label + " memory", floats(pre + "memory"), det.memory().values(), tolerance);
            }
            compare(label + " queries", floats(pre + "queries"), det.queries(), tolerance);
            float[] logits = floats(pre + "logits");
            float worstLogit = maxAbs(logits, det.logits());
            report.add(label + " logits: max |diff| " + worstLogit);
            assertTrue(worstLogit <= 1e-4f, label + ": logits differ by " + worstLogit);
            float[] refBoxes = floats(pre + "boxes");
            float worstPx = 0;
            for (int k = 0; k < q * 4; k++) {
                float scale = (k % 2 == 0) ? width : height;
                worstPx = Math.max(worstPx, Math.abs(refBoxes[k] - det.boxes()[k]) * scale);
            }
            report.add(label + " boxes: max " + worstPx + " px");
            assertTrue(worstPx <= 0.5f, label + ": boxes differ by " + worstPx + " px");
            float presence = floats(pre + "presence")[0];
            report.add(label + " presence " + presence + " ours " + det.presence());
            assertEquals(Math.signum(presence), Math.signum(det.presence()), label + " presence sign");
            assertEquals(presence, det.presence(), 1e-4f, label + " presence logit");
            int[] top = toInts(longs(pre + "top"));
            int side = 4 * image.grid();
            float[] masks = model.masks(det, top);
            float[] refMasks = floats(pre + "masks");
            float[] finalScores = floats(pre + "final_scores");
            float[] finalBoxes = floats(pre + "final_boxes");
            byte[] packed = Npy.read(dir.resolve(pre + "final_masks.npy")).raw();
            for (int k = 0; k < top.length; k++) {
                float[] ours = new float[side * side];
                float[] ref = new float[side * side];
                System.arraycopy(masks, k * side * side, ours, 0, side * side);
                System.arraycopy(refMasks, k * side * side, ref, 0, side * side);
                double iou = iou(positive(ref), positive(ours));
                report.add(label + " query " + top[k] + " mask IoU " + iou + ", logits max |diff| "
                        + maxAbs(ref, ours));
                assertTrue(iou >= 0.99, label + " query " + top[k] + ": mask IoU " + iou);
                Sam3Result.Instance inst = Sam3Image.instance(det, top[k], ours, side, width, height);
                assertEquals(finalScores[k], inst.score(), 1e-4f, label + " final score of query " + top[k]);
                for (int c = 0; c < 4; c++) {
                    assertEquals(finalBoxes[4 * k + c], inst.box()[c], 0.5f, label + " final box of " + top[k]);
                }
                boolean[] refBits = unpack(packed, k * height * width, height * width);
                double finalIou = iou(refBits, inst.mask());
                report.add(label + " query " + top[k] + " final mask IoU " + finalIou);
                assertTrue(finalIou >= 0.99, label + " query " + top[k] + ": final mask IoU " + finalIou);
            }
        }
    }

    List<String> report() {
        return report;
    }

    private void compare(String what, float[] expected, float[] actual, float tolerance) {
        assertEquals(expected.length, actual.length, what + " size");
        float worst = maxAbs(expected, actual);
        float scale = 0;
        for (float v : expected) {
            scale = Math.max(scale, Math.abs(v));
        }
        report.add(what + ": max |diff| " + worst + " (values up to " + scale + ")");
        assertTrue(worst <= tolerance * Math.max(1f, scale), what + " differs by " + worst + " (values up to "
                + scale + ", tolerance " + tolerance + " relative)");
    }

    /** [c, n] (a torch map's channels first) to [n, c]. */
    static float[] channelsLast(float[] chw, int n) {
        int c = chw.length / n;
        float[] out = new float[chw.length];
        for (int ch = 0; ch < c; ch++) {
            for (int i = 0; i < n; i++) {
                out[i * c + ch] = chw[ch * n + i];
            }
        }
        return out;
    }

    static float maxAbs(float[] a, float[] b) {
        assertEquals(a.length, b.length);
        float worst = 0;
        for (int i = 0; i < a.length; i++) {
            worst = Math.max(worst, Math.abs(a[i] - b[i]));
        }
        return worst;
    }

    static boolean[] positive(float[] logits) {
        boolean[] out = new boolean[logits.length];
        for (int i = 0; i < logits.length; i++) {
            out[i] = logits[i] > 0;
        }
        return out;
    }

    static double iou(boolean[] a, boolean[] b) {
        long inter = 0;
        long union = 0;
        for (int i = 0; i < a.length; i++) {
            inter += a[i] && b[i] ? 1 : 0;
            union += a[i] || b[i] ? 1 : 0;
        }
        return union == 0 ? 1.0 : (double) inter / union;
    }

    static boolean[] unpack(byte[] packed, int start, int n) {
        boolean[] out = new boolean[n];
        for (int i = 0; i < n; i++) {
            int bit = start + i;
            out[i] = ((packed[bit >> 3] >> (7 - (bit & 7))) & 1) != 0;
        }
        return out;
    }

    static int[] toInts(long[] v) {
        int[] out = new int[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = Math.toIntExact(v[i]);
        }
        return out;
    }
}
