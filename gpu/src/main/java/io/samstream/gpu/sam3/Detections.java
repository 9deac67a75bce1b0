package io.samstream.gpu.sam3;

/**
 * The detector's raw output for one image and prompt, in the model's terms (Meta's {@code forward_grounding}):
 * per object query a score logit ({@code pred_logits}) and a box ({@code pred_boxes}: cx, cy, w, h in 0..1 of the
 * model input), and the presence logit ({@code presence_logit_dec}): whether the concept is in the image at all.
 * The probability of query q being an instance is sigmoid(logits[q]) * sigmoid(presence). The memory and prompt
 * are kept for the masks, which are made for the queries asked ({@link Sam3Model#masks}).
 *
 * @param logits   [queries]
 * @param boxes    [queries, 4]
 * @param presence the presence logit
 * @param queries  the decoder's last normalized queries [queries, d]
 * @param memory   the fusion encoder's output [grid², d]
 */
public record Detections(float[] logits, float[] boxes, float presence, float[] queries, FeatureMap memory,
        VisionFeatures image, Prompt prompt) {
    public int count() {
        return logits.length;
    }

    /** sigmoid(logit) * sigmoid(presence) of query q, as Sam3Processor scores it. */
    public float probability(int q) {
        return DetrDecoder.sigmoid(logits[q]) * DetrDecoder.sigmoid(presence);
    }

    /** The query indexes, best logit first (ties: lower index first). */
    public int[] ranking() {
        return java.util.stream.IntStream.range(0, logits.length).boxed()
                .sorted((a, b) -> logits[a] != logits[b] ? Float.compare(logits[b], logits[a]) : a - b)
                .mapToInt(Integer::intValue).toArray();
    }
}
