package io.samstream.gpu.predict;

import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.image.MaskPostprocessor;
import io.samstream.gpu.image.ResizeLongestSide;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.image.SamPreprocessor;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.tensor.Tensor;

/**
 * Segments one image at a time with prompts in original-image pixels, like the reference
 * {@code SamPredictor}: {@link #setImage} resizes (PIL bilinear, longest side to the model size),
 * normalizes, pads and encodes once; {@link #predict} transforms the prompt, decodes and upscales the
 * masks back to the original size. Works with any {@link SamBackend}. Not thread-safe: one image at a time.
 */
public final class SamPredictor {
    private final SamBackend backend;
    private final ResizeLongestSide resize;
    private final SamPreprocessor preprocessor;
    private final MaskPostprocessor postprocessor;

    private ImageSize originalSize;
    private ImageSize inputSize;
    private Tensor embedding;

    public SamPredictor(SamBackend backend) {
        this.backend = backend;
        int s = backend.config().imageSize();
        this.resize = new ResizeLongestSide(s);
        this.preprocessor = new SamPreprocessor(s);
        this.postprocessor = new MaskPostprocessor(s);
    }

    /** Encodes {@code image}; later {@link #predict} calls decode against it. */
    public void setImage(RgbImage image) {
        RgbImage resized = resize.apply(image);
        Tensor input = preprocessor.apply(resized);
        Tensor encoded = backend.encode(input);
        this.originalSize = ImageSize.of(image);
        this.inputSize = ImageSize.of(resized);
        this.embedding = encoded;
    }

    /** The current image's embedding {@code [1, C, E, E]}. */
    public Tensor embedding() {
        requireImage();
        return embedding;
    }

    public ImageSize originalSize() {
        requireImage();
        return originalSize;
    }

    /**
     * Masks for one prompt set: validated against the image, scaled into the model's input frame
     * (float64 as the reference, then float32), decoded, upscaled and thresholded at 0.
     */
    public Prediction predict(PromptSet set) {
        requireImage();
        set.validate(originalSize.width(), originalSize.height());
        DecoderOutput out = backend.decode(embedding, toModelPrompt(set), set.multimask());
        boolean[][] masks = postprocessor.masks(out.lowResLogits(), inputSize, originalSize);
        return new Prediction(masks, originalSize.width(), originalSize.height(), out.iouPredictions(),
                out.lowResLogits());
    }

    private Prompt toModelPrompt(PromptSet set) {
        float[][] points = null;
        if (set.points() != null) {
            points = new float[set.points().length][];
            for (int i = 0; i < points.length; i++) {
                double[] xy = resize.applyCoords(set.points()[i], originalSize);
                points[i] = new float[] {(float) xy[0], (float) xy[1]};
            }
        }
        float[] box = null;
        if (set.box() != null) {
            double[] b = resize.applyBoxes(set.box(), originalSize);
            box = new float[] {(float) b[0], (float) b[1], (float) b[2], (float) b[3]};
        }
        return new Prompt(points, set.labels() == null ? null : set.labels().clone(), box, null);
    }

    private void requireImage() {
        if (embedding == null) {
            throw new IllegalStateException("no image: call setImage before predict");
        }
    }
}
