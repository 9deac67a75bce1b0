package io.samstream.stream.engine;

import io.samstream.config.PromptSpec;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.connectors.kafka.MaskRecord.Box;
import io.samstream.connectors.kafka.MaskRecord.ObjectMask;
import io.samstream.connectors.kafka.MaskRecord.Rle;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.image.MaskPostprocessor;
import io.samstream.gpu.image.ResizeLongestSide;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.image.SamPreprocessor;
import io.samstream.gpu.mask.CocoRle;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The model work of the engine, free of Akka: a batch of frames to embeddings ({@link #encode}), one
 * frame's embedding and prompts to its mask record ({@link #decode}). Thread-safe when the backend is.
 */
public final class Segmenter {
    /** SAM's {@code stability_score_offset}: the mask thresholded at +1 and at -1. */
    static final float STABILITY_OFFSET = 1.0f;

    private final SamBackend backend;
    private final String modelName;
    private final ResizeLongestSide resize;
    private final SamPreprocessor preprocessor;
    private final MaskPostprocessor postprocessor;

    public Segmenter(SamBackend backend, String modelName) {
        this.backend = backend;
        this.modelName = modelName;
        int s = backend.config().imageSize();
        this.resize = new ResizeLongestSide(s);
        this.preprocessor = new SamPreprocessor(s);
        this.postprocessor = new MaskPostprocessor(s);
    }

    public String modelName() {
        return modelName;
    }

    public SamBackend backend() {
        return backend;
    }

    /** The embeddings of a batch of frames, one {@code [1, C, E, E]} tensor per frame, in order. */
    public List<Tensor> encode(List<VideoFrame> frames) {
        int s = backend.config().imageSize();
        Tensor batch = Tensor.zeros(frames.size(), 3, s, s);
        for (int i = 0; i < frames.size(); i++) {
            VideoFrame f = frames.get(i);
            preprocessor.applyInto(resize.apply(new RgbImage(f.width(), f.height(), f.rgb())), batch, i);
        }
        Tensor embeddings = backend.encode(batch);
        int per = embeddings.size() / frames.size();
        int[] shape = embeddings.shape();
        List<Tensor> out = new ArrayList<>(frames.size());
        for (int i = 0; i < frames.size(); i++) {
            out.add(new Tensor(Arrays.copyOfRange(embeddings.data(), i * per, (i + 1) * per), 1, shape[1], shape[2],
                    shape[3]));
        }
        return out;
    }

    /**
     * The mask record of one frame: every object of {@code prompts} decoded against the frame's
     * embedding, upscaled to the frame, thresholded at 0 and run-length encoded.
     *
     * @throws IllegalArgumentException when a prompt lies outside the frame (names the object)
     */
    public MaskRecord decode(VideoFrame frame, Tensor embedding, PromptSpec prompts) {
        return decode(frame, embedding, prompts.resolve(frame.width(), frame.height()));
    }

    /** The mask record of one frame for these objects (already resolved for the frame's size). */
    public MaskRecord decode(VideoFrame frame, Tensor embedding, List<ObjectPrompt> objects) {
        ImageSize original = new ImageSize(frame.height(), frame.width());
        ImageSize resized = resize.preprocessShape(original);
        List<ObjectMask> masks = new ArrayList<>(objects.size());
        for (ObjectPrompt o : objects) {
            masks.add(decodeObject(o, embedding, original, resized));
        }
        return new MaskRecord(frame.streamId(), frame.index(), frame.ptsMillis(), frame.capturedAt(), frame.width(),
                frame.height(), modelName, masks);
    }

    private ObjectMask decodeObject(ObjectPrompt o, Tensor embedding, ImageSize original, ImageSize resized) {
        Prompt prompt = toModelPrompt(o, original);
        // A lone point is ambiguous (part, object, whole): take the best of SAM's three masks, as its
        // predictor advises; with more context the single-mask output is the better one.
        boolean multimask = o.box() == null && o.points().length == 1;
        DecoderOutput out = backend.decode(embedding, prompt, multimask);
        int best = 0;
        float[] iou = out.iouPredictions();
        for (int i = 1; i < iou.length; i++) {
            if (iou[i] > iou[best]) {
                best = i;
            }
        }
        int l = backend.config().lowResSize();
        Tensor lowRes = new Tensor(Arrays.copyOfRange(out.lowResLogits().data(), best * l * l, (best + 1) * l * l), 1, l, l);
        float[] logits = postprocessor.upscaleLogits(lowRes, resized, original).data();
        boolean[] mask = MaskPostprocessor.threshold(logits, 0, logits.length);
        CocoRle rle = CocoRle.ofMask(mask, original.height(), original.width());
        int[] b = rle.boundingBoxCorners();
        return new ObjectMask(o.id(), finite(iou[best]), stabilityScore(logits), new Box(b[0], b[1], b[2], b[3]),
                rle.area(), new Rle(original.height(), original.width(), rle.countsString()));
    }

    /**
     * SAM's {@code calculate_stability_score} on the upscaled logits: the IoU of the mask thresholded at
     * {@code +offset} and at {@code -offset} (the first lies inside the second). 0 when both are empty
     * (where SAM would divide by zero), so records stay valid JSON.
     */
    static float stabilityScore(float[] logits) {
        long inner = 0;
        long outer = 0;
        for (float v : logits) {
            if (v > MaskPostprocessor.MASK_THRESHOLD + STABILITY_OFFSET) {
                inner++;
            }
            if (v > MaskPostprocessor.MASK_THRESHOLD - STABILITY_OFFSET) {
                outer++;
            }
        }
        return outer == 0 ? 0f : (float) ((double) inner / outer);
    }

    private Prompt toModelPrompt(ObjectPrompt o, ImageSize original) {
        float[][] points = null;
        int[] labels = null;
        if (o.points() != null && o.points().length > 0) {
            points = new float[o.points().length][];
            labels = new int[points.length];
            for (int i = 0; i < points.length; i++) {
                double[] p = o.points()[i];
                inside(o, "point", p[0], p[1], original);
                double[] xy = resize.applyCoords(new double[] {p[0], p[1]}, original);
                points[i] = new float[] {(float) xy[0], (float) xy[1]};
                labels[i] = o.label(i);
            }
        }
        float[] box = null;
        if (o.box() != null) {
            double[] b = o.box();
            inside(o, "box corner", b[0], b[1], original);
            inside(o, "box corner", b[2], b[3], original);
            double[] m = resize.applyBoxes(b, original);
            box = new float[] {(float) m[0], (float) m[1], (float) m[2], (float) m[3]};
        }
        return new Prompt(points, labels, box, null);
    }

    private static void inside(ObjectPrompt o, String what, double x, double y, ImageSize size) {
        if (x < 0 || y < 0 || x > size.width() || y > size.height()) {
            throw new IllegalArgumentException("object " + o.id() + ": " + what + " (" + x + ", " + y
                    + ") lies outside the " + size.width() + "x" + size.height() + " frame");
        }
    }

    private static float finite(float v) {
        return Float.isFinite(v) ? v : 0f;
    }
}
