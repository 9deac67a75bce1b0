package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.sam2.Resampling;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Concept prompts on single images with SAM 3 on the CPU, the way Meta's {@code Sam3Processor} runs them: an image
 * is encoded once ({@link #encode}); then a noun phrase, optionally with exemplar boxes, finds every instance -
 * each query whose sigmoid(logit) * sigmoid(presence) passes the threshold (0.5 in Meta's processor) becomes an
 * instance with its box scaled to the image and its mask upsampled to the image and thresholded.
 */
public final class Sam3Image implements AutoCloseable {
    /** Meta's {@code Sam3Processor} default confidence threshold. */
    public static final float DEFAULT_THRESHOLD = 0.5f;

    private final Sam3Model model;
    private final Sam3Tokenizer tokenizer;

    public Sam3Image(Sam3Model model, Sam3Tokenizer tokenizer) {
        if (tokenizer.vocabularySize() != model.config().text().vocabSize()) {
            throw new IllegalArgumentException("the tokenizer's vocabulary has " + tokenizer.vocabularySize()
                    + " ids but the text encoder embeds " + model.config().text().vocabSize() + " (" + tokenizer
                    + ")");
        }
        this.model = model;
        this.tokenizer = tokenizer;
    }

    /** sam3.pt and the vocabulary next to it ({@link Sam3Tokenizer#forCheckpoint}). */
    public static Sam3Image open(Path checkpoint, int threads) {
        Sam3Tokenizer tokenizer = Sam3Tokenizer.forCheckpoint(checkpoint);
        return new Sam3Image(new Sam3Model(CheckpointLoader.load(checkpoint), threads), tokenizer);
    }

    public Sam3Model model() {
        return model;
    }

    /** An image encoded for any number of prompts. */
    public record Encoded(VisionFeatures features, int width, int height) {}

    public Encoded encode(RgbImage image) {
        return new Encoded(model.encodeImage(image), image.width(), image.height());
    }

    /** The phrase's instances (exemplar boxes may be empty), threshold as Meta's processor applies it. */
    public Sam3Result find(Encoded image, String phrase, List<ExemplarBox> boxes, float threshold) {
        TextFeatures text = model.encodeText(tokenizer.tokenize(phrase, model.config().text().contextLength()));
        Detections det = model.detect(image.features(), text, boxes);
        List<Integer> kept = new ArrayList<>();
        for (int q : det.ranking()) {
            if (det.probability(q) > threshold) {
                kept.add(q);
            }
        }
        int[] which = kept.stream().mapToInt(Integer::intValue).toArray();
        List<Sam3Result.Instance> instances = new ArrayList<>();
        if (which.length > 0) {
            float[] masks = model.masks(det, which);
            int side = 4 * image.features().grid();
            for (int i = 0; i < which.length; i++) {
                float[] logits = new float[side * side];
                System.arraycopy(masks, i * side * side, logits, 0, side * side);
                instances.add(instance(det, which[i], logits, side, image.width(), image.height()));
            }
        }
        return new Sam3Result(DetrDecoder.sigmoid(det.presence()), instances);
    }

    /** One query as an instance of an image of width x height, from its mask logits at side x side. */
    static Sam3Result.Instance instance(Detections det, int q, float[] maskLogits, int side, int width, int height) {
        float[] b = det.boxes();
        float cx = b[4 * q];
        float cy = b[4 * q + 1];
        float w = b[4 * q + 2];
        float h = b[4 * q + 3];
        float[] box = {(cx - 0.5f * w) * width, (cy - 0.5f * h) * height, (cx + 0.5f * w) * width,
                (cy + 0.5f * h) * height};
        float[] up = Resampling.bilinear(maskLogits, side, side, height, width);
        boolean[] mask = new boolean[up.length];
        for (int i = 0; i < up.length; i++) {
            mask[i] = DetrDecoder.sigmoid(up[i]) > 0.5f;
        }
        return new Sam3Result.Instance(q, det.probability(q), box, mask);
    }

    @Override
    public void close() {
        model.close();
    }
}
