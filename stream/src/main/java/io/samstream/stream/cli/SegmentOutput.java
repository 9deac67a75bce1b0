package io.samstream.stream.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.gpu.mask.CocoRle;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.predict.AutomaticMaskGenerator;
import io.samstream.gpu.predict.GeneratedMask;
import io.samstream.gpu.predict.Prediction;
import io.samstream.gpu.predict.PromptSet;
import io.samstream.gpu.sam3.Sam3Result;
import io.samstream.gpu.tensor.Npy;
import io.samstream.gpu.tensor.NpyArray;
import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What {@code segment} writes into its output directory.
 *
 * <ul>
 *   <li>{@code masks.json}: per prompt set, its masks as COCO compressed RLE ({@code pycocotools.mask.decode}
 *       reads them), the predicted IoU, the mask's box {@code [x0, y0, x1, y1]} (x1, y1 exclusive; null
 *       for an empty mask) and its area in pixels.
 *   <li>with {@code --auto}, instead of prompt sets: the generator's {@code settings} and its
 *       {@code masks}, best first, each as above plus its stability score and the grid {@code point}
 *       that prompted it.
 *   <li>with {@code --text} (a SAM 3 checkpoint), instead of prompt sets: the {@code concept} (phrase, exemplar
 *       boxes, threshold, presence score) and its instances' {@code masks}, best first, each as above with its
 *       {@code score} and the detector's box.
 *   <li>with {@code --npy}, exactly the arrays the reference {@code SamPredictor} returns:
 *       {@code embedding.npy} float32 [1,C,h,w]; per set {@code prompt-<i>/masks.npy} bool [N,H,W],
 *       {@code iou.npy} float32 [N], {@code lowres.npy} float32 [N,L,L].
 * </ul>
 */
final class SegmentOutput {
    private final Path dir;

    SegmentOutput(Path dir) throws IOException {
        this.dir = dir;
        Files.createDirectories(dir);
    }

    void writeMasksJson(Path image, Path checkpoint, SamBackend backend, List<PromptSet> sets,
            List<Prediction> predictions) throws IOException {
        writeMasksJson(image, checkpoint, backend.config().describe(), backend.name(), sets, predictions);
    }

    /** As above, with the model's description and the device named by the caller (SAM 2.1 has no backend). */
    void writeMasksJson(Path image, Path checkpoint, String model, String device, List<PromptSet> sets,
            List<Prediction> predictions) throws IOException {
        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode root = json.createObjectNode();
        Prediction first = predictions.get(0);
        root.put("image", image.toString());
        root.put("width", first.width());
        root.put("height", first.height());
        root.put("checkpoint", checkpoint.toString());
        root.put("model", model);
        root.put("device", device);
        ArrayNode out = root.putArray("prompt_sets");
        for (int i = 0; i < sets.size(); i++) {
            ObjectNode entry = out.addObject();
            entry.put("index", i);
            entry.set("prompt", promptJson(json, sets.get(i)));
            ArrayNode masks = entry.putArray("masks");
            Prediction p = predictions.get(i);
            for (int m = 0; m < p.count(); m++) {
                masks.add(maskJson(json, p.masks()[m], p.width(), p.height(), p.iouPredictions()[m]));
            }
        }
        json.writeValue(dir.resolve("masks.json").toFile(), root);
    }

    /**
     * A SAM 3 concept prompt's instances ({@code --text}): the phrase, the threshold and the presence score, then the
     * masks as for prompt sets, each with its score (sigmoid(logit) x presence) instead of a predicted IoU and the
     * detector's box (floats, pixels).
     */
    void writeConceptMasksJson(Path image, Path checkpoint, String model, String device, int width, int height,
            String text, List<float[]> exemplars, float threshold, Sam3Result result) throws IOException {
        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode root = json.createObjectNode();
        root.put("image", image.toString());
        root.put("width", width);
        root.put("height", height);
        root.put("checkpoint", checkpoint.toString());
        root.put("model", model);
        root.put("device", device);
        ObjectNode concept = root.putObject("concept");
        concept.put("text", text);
        ArrayNode boxes = concept.putArray("exemplar_boxes");
        for (float[] b : exemplars) {
            boxes.addArray().add(b[0]).add(b[1]).add(b[2]).add(b[3]);
        }
        concept.put("threshold", threshold);
        concept.put("presence", result.presence());
        ArrayNode out = root.putArray("masks");
        for (Sam3Result.Instance inst : result.instances()) {
            ObjectNode n = maskJson(json, inst.mask(), width, height, Float.NaN);
            n.remove("predicted_iou");
            n.put("score", inst.score());
            ArrayNode det = n.putArray("detector_box");
            for (float v : inst.box()) {
                det.add(v);
            }
            out.add(n);
        }
        json.writeValue(dir.resolve("masks.json").toFile(), root);
    }

    void writeAutoMasksJson(Path image, Path checkpoint, SamBackend backend, int width, int height,
            AutomaticMaskGenerator.Settings settings, List<GeneratedMask> masks) throws IOException {
        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode root = json.createObjectNode();
        root.put("image", image.toString());
        root.put("width", width);
        root.put("height", height);
        root.put("checkpoint", checkpoint.toString());
        root.put("model", backend.config().describe());
        root.put("device", backend.name());
        ObjectNode s = root.putObject("settings");
        s.put("points_per_side", settings.pointsPerSide());
        s.put("points_per_batch", settings.pointsPerBatch());
        s.put("pred_iou_thresh", settings.predIouThreshold());
        s.put("stability_score_thresh", settings.stabilityThreshold());
        s.put("stability_score_offset", settings.stabilityOffset());
        s.put("box_nms_thresh", settings.boxNmsThreshold());
        s.put("min_area", settings.minArea());
        ArrayNode out = root.putArray("masks");
        for (GeneratedMask m : masks) {
            CocoRle rle = m.rle();
            ObjectNode n = out.addObject();
            ObjectNode mask = n.putObject("mask");
            mask.putArray("size").add(height).add(width);
            mask.put("counts", rle.countsString());
            n.put("predicted_iou", m.predictedIou());
            n.put("stability", m.stability());
            ArrayNode box = n.putArray("box");
            for (double v : m.box()) {
                box.add((long) v); // whole pixels
            }
            n.put("area", m.area());
            n.putArray("point").add(m.point()[0]).add(m.point()[1]);
        }
        json.writeValue(dir.resolve("masks.json").toFile(), root);
    }

    void writeNpy(Tensor embedding, List<Prediction> predictions) throws IOException {
        Npy.write(dir.resolve("embedding.npy"), embedding);
        for (int i = 0; i < predictions.size(); i++) {
            Prediction p = predictions.get(i);
            Path set = Files.createDirectories(dir.resolve("prompt-" + i));
            boolean[] flat = new boolean[p.count() * p.width() * p.height()];
            for (int m = 0; m < p.count(); m++) {
                System.arraycopy(p.masks()[m], 0, flat, m * p.width() * p.height(), p.width() * p.height());
            }
            Npy.write(set.resolve("masks.npy"), NpyArray.ofBool(flat, p.count(), p.height(), p.width()));
            Npy.write(set.resolve("iou.npy"), NpyArray.ofFloat32(p.iouPredictions().clone(), p.count()));
            Npy.write(set.resolve("lowres.npy"), p.lowResLogits());
        }
    }

    private static ObjectNode promptJson(ObjectMapper json, PromptSet s) {
        ObjectNode n = json.createObjectNode();
        if (s.points() == null) {
            n.putNull("points");
            n.putNull("labels");
        } else {
            ArrayNode pts = n.putArray("points");
            for (double[] p : s.points()) {
                pts.addArray().add(p[0]).add(p[1]);
            }
            ArrayNode labels = n.putArray("labels");
            for (int l : s.labels()) {
                labels.add(l);
            }
        }
        if (s.box() == null) {
            n.putNull("box");
        } else {
            n.putArray("box").add(s.box()[0]).add(s.box()[1]).add(s.box()[2]).add(s.box()[3]);
        }
        n.put("multimask", s.multimask());
        return n;
    }

    private static ObjectNode maskJson(ObjectMapper json, boolean[] mask, int width, int height, float iou) {
        CocoRle rle = CocoRle.ofMask(mask, height, width);
        ObjectNode n = json.createObjectNode();
        ObjectNode m = n.putObject("mask");
        m.putArray("size").add(height).add(width);
        m.put("counts", rle.countsString());
        n.put("predicted_iou", iou);
        if (rle.area() == 0) {
            n.putNull("box");
        } else {
            int[] b = rle.boundingBoxCorners();
            n.putArray("box").add(b[0]).add(b[1]).add(b[2]).add(b[3]);
        }
        n.put("area", rle.area());
        return n;
    }
}
