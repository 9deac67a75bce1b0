package io.samstream.gpu.sam3.video;

import io.samstream.gpu.sam3.Detections;
import io.samstream.gpu.sam3.ExemplarBox;
import io.samstream.gpu.sam3.Sam3Model;
import io.samstream.gpu.sam3.TextFeatures;
import io.samstream.gpu.sam3.VisionFeatures;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * The video model's detections on a frame ({@code Sam3VideoBase.run_backbone_and_detection} with the detector's
 * {@code forward_grounding}): the image path's scores made joint with the presence score as the video detector
 * gives them (logit(sigmoid(logit) x sigmoid(presence)), clamped to [-10, 10]), the queries whose probability passes
 * {@code threshold} (0.5) kept, then mask non-maximum suppression among them ({@code nms_masks}: by probability,
 * dropping a detection whose mask overlaps a kept one by IoU above {@code nmsIou}, 0.1; ties: the later query
 * first). The phrase's text features are computed once and cached (a few phrases per stream).
 */
public final class Sam3ConceptDetector implements ConceptDetector {
    /** Phrases whose text features are kept. */
    static final int TEXT_CACHE = 64;

    private final Sam3Model model;
    private final Sam3Tokenizer tokenizer;
    private final float threshold;
    private final float nmsIou;
    private final Map<String, TextFeatures> texts = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, TextFeatures> eldest) {
            return size() > TEXT_CACHE;
        }
    };

    public Sam3ConceptDetector(Sam3Model model, Sam3Tokenizer tokenizer, float threshold, float nmsIou) {
        if (tokenizer.vocabularySize() != model.config().text().vocabSize()) {
            throw new IllegalArgumentException("the tokenizer's vocabulary has " + tokenizer.vocabularySize()
                    + " ids but the text encoder embeds " + model.config().text().vocabSize());
        }
        this.model = model;
        this.tokenizer = tokenizer;
        this.threshold = threshold;
        this.nmsIou = nmsIou;
    }

    @Override
    public List<Detection> detect(VisionFeatures image, Concept concept, boolean firstFrame) {
        if (!firstFrame && concept.phrase().isEmpty()) {
            return List.of(); // boxes alone: new instances only on the frame they were drawn on
        }
        List<ExemplarBox> boxes = firstFrame ? concept.exemplars() : List.of();
        Detections det = model.detect(image, text(concept.text()), boxes);
        List<Integer> candidates = new ArrayList<>();
        float[] probs = new float[det.count()];
        for (int q = 0; q < probs.length; q++) {
            probs[q] = jointProbability(det.logits()[q], det.presence());
            if (probs[q] > threshold) {
                candidates.add(q);
            }
        }
        if (candidates.isEmpty()) {
            det.memory().release();
            return List.of();
        }
        int[] which = candidates.stream().mapToInt(Integer::intValue).toArray();
        float[] masks = model.masks(det, which);
        det.memory().release(); // read by the decoder and the mask head, not again
        int pixels = masks.length / which.length;
        Detection[] all = new Detection[which.length];
        // each detection's mask packed to bits (hundreds with a loose threshold, so on the pool); its logits stay a
        // view of the frame's array until a rule reads them
        IntStream.range(0, which.length).parallel().forEach(i -> all[i] = new Detection(which[i], probs[which[i]],
                xyxy(det.boxes(), which[i]), masks, i * pixels, pixels));
        return nmsIou > 0 ? suppress(List.of(all), nmsIou) : List.of(all);
    }

    /** {@code nms_masks} over detections already above the threshold: survivors in query order. */
    static List<Detection> suppress(List<Detection> dets, float iouThreshold) {
        List<Detection> order = new ArrayList<>(dets);
        order.sort(Comparator.comparingDouble((Detection d) -> d.score()).reversed()
                .thenComparing(Comparator.comparingInt(Detection::query).reversed()));
        boolean[] removed = new boolean[order.size()];
        List<Detection> kept = new ArrayList<>();
        for (int i = 0; i < order.size(); i++) {
            if (removed[i]) {
                continue;
            }
            kept.add(order.get(i));
            for (int j = i + 1; j < order.size(); j++) {
                if (!removed[j] && order.get(i).bits().iouAbove(order.get(j).bits(), iouThreshold)) {
                    removed[j] = true;
                }
            }
        }
        kept.sort(Comparator.comparingInt(Detection::query));
        return kept;
    }

    /**
     * The video detector's probability: {@code sigmoid(clamp(inverse_sigmoid(sigmoid(logit) * sigmoid(presence)),
     * -10, 10))} with Meta's inverse_sigmoid (eps 1e-3), in float as torch computes it.
     */
    static float jointProbability(float logit, float presence) {
        float x = Propagation.sigmoid(logit) * Propagation.sigmoid(presence);
        x = Math.min(Math.max(x, 0f), 1f);
        float x1 = Math.max(x, 1e-3f);
        float x2 = Math.max(1f - x, 1e-3f);
        float l = (float) Math.log(x1 / x2);
        l = Math.min(Math.max(l, -10f), 10f);
        return Propagation.sigmoid(l);
    }

    private TextFeatures text(String phrase) {
        return texts.computeIfAbsent(phrase,
                p -> model.encodeText(tokenizer.tokenize(p, model.config().text().contextLength())));
    }

    private static float[] xyxy(float[] boxes, int q) {
        float cx = boxes[4 * q];
        float cy = boxes[4 * q + 1];
        float w = boxes[4 * q + 2];
        float h = boxes[4 * q + 3];
        return new float[] {cx - 0.5f * w, cy - 0.5f * h, cx + 0.5f * w, cy + 0.5f * h};
    }
}
