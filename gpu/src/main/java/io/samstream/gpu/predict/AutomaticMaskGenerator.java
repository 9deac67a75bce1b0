package io.samstream.gpu.predict;

import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.image.MaskPostprocessor;
import io.samstream.gpu.image.ResizeLongestSide;
import io.samstream.gpu.mask.CocoRle;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Every object of an image without prompts: segment-anything's {@code SamAutomaticMaskGenerator} with
 * {@code crop_n_layers = 0} (the whole image, no crops), written for samstream.
 *
 * <ol>
 *   <li>A {@link PointGrid} of {@code pointsPerSide^2} single foreground points, decoded
 *       {@code pointsPerBatch} at a time ({@link SamBackend#decodeBatch}) with multimask output: three
 *       candidate masks per point.
 *   <li>Candidates whose predicted IoU is not above {@code predIouThreshold} are dropped (no filter at 0;
 *       a NaN or infinite prediction is always dropped).
 *   <li>The survivors' logits are upscaled to the image ({@link MaskPostprocessor}, the reference's
 *       post-processing); candidates whose {@link StabilityScore} there is below
 *       {@code stabilityThreshold} are dropped (no filter at 0).
 *   <li>The mask is the upscaled logits above 0; its box is the reference's {@code batched_mask_to_box}
 *       (x1, y1 the last set column and row). Empty masks are dropped (the reference keeps them when the
 *       stability filter is off, with a box of zeros that suppresses nothing).
 *   <li>{@link BoxNms} with {@code boxNmsThreshold}, scored by predicted IoU.
 *   <li>With {@code minArea > 0}, the reference's {@code min_mask_region_area} post-processing: holes and
 *       islands (8-connected) under {@code minArea} pixels are filled and removed ({@link SmallRegions}),
 *       and a second box NMS on the new boxes prefers masks that needed no change. This is what merges
 *       a mask with a stray speck far away (its box is wide) into the clean mask of the same object.
 *       Then, unlike the reference, masks still under {@code minArea} pixels are dropped.
 * </ol>
 *
 * <p>The result is best (highest predicted IoU) first; boxes in {@link GeneratedMask} are pixel edges.
 *
 * <p>Every step runs at the reference's resolution, so the same decoder outputs give the same masks; the
 * saving is in the order and in what is kept. The IoU filter needs no pixels, so only its survivors are
 * upscaled, one at a time, to a plane that is dropped once the stability score, area and box are known;
 * the NMS survivors are upscaled once more for their masks. Only low-res logits of candidates are held.
 * On CPU the decoder runs take most of {@link #generate} ({@code bench/results/code-comment-figures.md}), so the
 * grid size sets the cost; a tracker can skip points on objects it already follows
 * ({@link #generate(Tensor, int, int, boolean[])}).
 *
 * <p>Other differences from the reference: the second NMS uses {@code boxNmsThreshold} (the reference the
 * larger of it and its {@code crop_nms_thresh}, 0.7 by default); grid points reach the model as float32
 * (the reference keeps them float64 until the positional encoding, a difference of about 1e-7 pixels);
 * ties in NMS scores keep their order (grid order, then multimask output) where torchvision's is unspecified.
 *
 * <p>Thread-safe when the backend is: it keeps no state between calls.
 */
public final class AutomaticMaskGenerator {

    /**
     * The generator's knobs; the defaults are the reference's.
     *
     * @param pointsPerSide      the grid is this many points a side (reference: 32)
     * @param pointsPerBatch     points decoded together (reference: 64)
     * @param predIouThreshold   keep masks whose predicted IoU is above this, in [0, 1] (reference: 0.88)
     * @param stabilityThreshold keep masks whose stability score is at least this, in [0, 1] (reference: 0.95)
     * @param stabilityOffset    the stability score cuts the logits at +- this, > 0 (reference: 1.0)
     * @param boxNmsThreshold    drop a mask whose box IoU with a better one is above this, in [0, 1] (reference: 0.7)
     * @param minArea            small-region clean-up and minimum mask area in pixels, >= 0 (reference: 0, off)
     */
    public record Settings(int pointsPerSide, int pointsPerBatch, float predIouThreshold, float stabilityThreshold,
            float stabilityOffset, float boxNmsThreshold, int minArea) {
        /** Above this the grid alone would be a million decodes: surely a mistake. */
        static final int MAX_POINTS_PER_SIDE = 1024;

        public Settings {
            if (pointsPerSide < 1 || pointsPerSide > MAX_POINTS_PER_SIDE) {
                throw new IllegalArgumentException("pointsPerSide must be in 1.." + MAX_POINTS_PER_SIDE + ", got "
                        + pointsPerSide);
            }
            if (pointsPerBatch < 1) {
                throw new IllegalArgumentException("pointsPerBatch must be at least 1, got " + pointsPerBatch);
            }
            requireUnit("predIouThreshold", predIouThreshold);
            requireUnit("stabilityThreshold", stabilityThreshold);
            if (!(stabilityOffset > 0) || Float.isInfinite(stabilityOffset)) {
                throw new IllegalArgumentException("stabilityOffset must be finite and > 0, got " + stabilityOffset);
            }
            requireUnit("boxNmsThreshold", boxNmsThreshold);
            if (minArea < 0) {
                throw new IllegalArgumentException("minArea must be >= 0 pixels, got " + minArea);
            }
        }

        /** The reference's defaults: 32 x 32 points, 64 a batch, IoU 0.88, stability 0.95 at offset 1, NMS 0.7. */
        public static Settings defaults() {
            return new Settings(32, 64, 0.88f, 0.95f, 1.0f, 0.7f, 0);
        }

        public Settings withPointsPerSide(int n) {
            return new Settings(n, pointsPerBatch, predIouThreshold, stabilityThreshold, stabilityOffset,
                    boxNmsThreshold, minArea);
        }

        public Settings withMinArea(int pixels) {
            return new Settings(pointsPerSide, pointsPerBatch, predIouThreshold, stabilityThreshold, stabilityOffset,
                    boxNmsThreshold, pixels);
        }

        private static void requireUnit(String name, float v) {
            if (!(v >= 0 && v <= 1)) {
                throw new IllegalArgumentException(name + " must be in [0, 1], got " + v);
            }
        }
    }

    private final SamBackend backend;
    private final Settings settings;
    private final ResizeLongestSide resize;
    private final MaskPostprocessor postprocessor;
    private java.util.function.BiConsumer<Integer, Integer> progress = (done, total) -> { };

    public AutomaticMaskGenerator(SamBackend backend, Settings settings) {
        if (backend == null || settings == null) {
            throw new IllegalArgumentException("the generator needs a backend and settings");
        }
        this.backend = backend;
        this.settings = settings;
        int s = backend.config().imageSize();
        this.resize = new ResizeLongestSide(s);
        this.postprocessor = new MaskPostprocessor(s);
    }

    public Settings settings() {
        return settings;
    }

    /** Told (grid points decoded, grid points in all) after each batch of a {@code generate}: long jobs' progress. */
    public AutomaticMaskGenerator onProgress(java.util.function.BiConsumer<Integer, Integer> listener) {
        this.progress = listener == null ? (done, total) -> { } : listener;
        return this;
    }

    /**
     * All masks of an image, after NMS, best (highest predicted IoU) first.
     *
     * @param embedding the image's embedding {@code [1, C, E, E]} ({@link SamBackend#encode} of it)
     * @param width     the original image's width in pixels
     * @param height    the original image's height in pixels
     */
    public List<GeneratedMask> generate(Tensor embedding, int width, int height) {
        return generate(embedding, width, height, null);
    }

    /**
     * As {@link #generate(Tensor, int, int)}, but grid points on pixels set in {@code covered} are not
     * decoded (not part of the reference): a tracker that already follows objects passes their masks, so
     * key-frame discovery spends decoder runs only where something new can be. Each point is one decoder
     * run, the bulk of the cost.
     *
     * @param covered row-major {@code height * width} pixels whose grid points to skip, or null for none
     */
    public List<GeneratedMask> generate(Tensor embedding, int width, int height, boolean[] covered) {
        if (embedding == null || embedding.rank() != 4 || embedding.dim(0) != 1) {
            throw new IllegalArgumentException("the embedding must be one image's [1, C, E, E], got "
                    + (embedding == null ? "null" : embedding.shapeString()));
        }
        return generate(ImageEmbedding.of(embedding), width, height, covered);
    }

    /** As {@link #generate(Tensor, int, int, boolean[])} on an embedding wherever the backend keeps it. */
    public List<GeneratedMask> generate(ImageEmbedding embedding, int width, int height, boolean[] covered) {
        ImageSize original = new ImageSize(height, width);
        if (covered != null && covered.length != original.pixels()) {
            throw new IllegalArgumentException("the covered mask has " + covered.length + " pixels, the image "
                    + width + "x" + height + " has " + original.pixels());
        }
        ImageSize resized = resize.preprocessShape(original);
        List<double[]> grid = new ArrayList<>();
        for (double[] p : PointGrid.forImage(settings.pointsPerSide(), width, height)) {
            // A grid point lies strictly inside the image, so its pixel is (floor x, floor y).
            if (covered == null || !covered[(int) p[1] * width + (int) p[0]]) {
                grid.add(p);
            }
        }
        List<Candidate> candidates = new ArrayList<>();
        for (int from = 0; from < grid.size(); from += settings.pointsPerBatch()) {
            int to = Math.min(grid.size(), from + settings.pointsPerBatch());
            List<Prompt> prompts = new ArrayList<>(to - from);
            for (int i = from; i < to; i++) {
                double[] xy = resize.applyCoords(grid.get(i), original);
                prompts.add(new Prompt(new float[][] {{(float) xy[0], (float) xy[1]}}, new int[] {1}, null, null));
            }
            List<DecoderOutput> outputs = backend.decodeBatch(embedding, prompts, true);
            if (outputs.size() != prompts.size()) {
                throw new IllegalStateException(backend.name() + " returned " + outputs.size() + " outputs for "
                        + prompts.size() + " prompt sets");
            }
            for (int k = 0; k < outputs.size(); k++) {
                collect(outputs.get(k), grid.get(from + k), resized, original, candidates);
            }
            progress.accept(to, grid.size());
        }
        return suppress(candidates, resized, original);
    }

    /**
     * The mask of {@code m} at the image's size, row-major {@code height * width}: its {@link GeneratedMask#rle}
     * when it has one, else its low-res logits upscaled and thresholded at 0.
     */
    public boolean[] mask(GeneratedMask m, int width, int height) {
        ImageSize original = new ImageSize(height, width);
        if (m.rle() != null) {
            if (m.rle().width() != width || m.rle().height() != height) {
                throw new IllegalArgumentException("the mask is " + m.rle().width() + "x" + m.rle().height()
                        + ", not " + width + "x" + height);
            }
            return m.rle().toMask();
        }
        return postprocessor.masks(m.lowResLogits(), resize.preprocessShape(original), original)[0];
    }

    /** The candidates of one point's decoder output that pass the IoU, stability and area filters. */
    private void collect(DecoderOutput out, double[] point, ImageSize resized, ImageSize original,
            List<Candidate> into) {
        float[] iou = out.iouPredictions();
        Tensor all = out.lowResLogits();
        int l = all.dim(-1);
        int plane = all.dim(-2) * l;
        for (int m = 0; m < out.count(); m++) {
            boolean passes = settings.predIouThreshold() > 0 ? iou[m] > settings.predIouThreshold() : true;
            if (!Float.isFinite(iou[m]) || !passes) {
                continue;
            }
            Tensor lowRes = new Tensor(Arrays.copyOfRange(all.data(), m * plane, (m + 1) * plane), 1, all.dim(-2), l);
            float[] logits = postprocessor.upscaleLogits(lowRes, resized, original).data();
            float stability = StabilityScore.of(logits, 0, logits.length, settings.stabilityOffset());
            if (settings.stabilityThreshold() > 0 && !(stability >= settings.stabilityThreshold())) {
                continue;
            }
            MaskExtent extent = MaskExtent.ofLogits(logits, original.width(), original.height());
            if (extent.area() == 0) {
                continue;
            }
            into.add(new Candidate(lowRes, iou[m], stability, extent, point));
        }
    }

    /**
     * Box NMS; then, with {@code minArea > 0}, the small-region clean-up of the survivors and a second NMS
     * that prefers masks the clean-up left alone (the reference's {@code postprocess_small_regions}), and
     * the masks still under {@code minArea} dropped. Best predicted IoU first.
     */
    private List<GeneratedMask> suppress(List<Candidate> candidates, ImageSize resized, ImageSize original) {
        int w = original.width();
        int h = original.height();
        List<Candidate> kept = select(candidates, BoxNms.keep(boxes(candidates), ious(candidates),
                settings.boxNmsThreshold()));
        List<Finished> finished = new ArrayList<>(kept.size());
        for (Candidate c : kept) {
            boolean[] mask = postprocessor.masks(c.lowRes(), resized, original)[0];
            boolean changed = false;
            MaskExtent extent = c.extent();
            if (settings.minArea() > 0) {
                SmallRegions.Result r = SmallRegions.clean(mask, w, h, settings.minArea());
                if (r.changed()) {
                    mask = r.mask();
                    changed = true;
                    extent = MaskExtent.ofMask(mask, w, h);
                }
            }
            finished.add(new Finished(c, mask, extent, changed));
        }
        if (settings.minArea() > 0) {
            double[][] boxes = new double[finished.size()][];
            float[] unchanged = new float[finished.size()];
            for (int i = 0; i < boxes.length; i++) {
                boxes[i] = finished.get(i).extent().inclusiveBox();
                unchanged[i] = finished.get(i).changed() ? 0f : 1f;
            }
            List<Finished> again = new ArrayList<>();
            for (int i : BoxNms.keep(boxes, unchanged, settings.boxNmsThreshold())) {
                if (finished.get(i).extent().area() >= settings.minArea()) {
                    again.add(finished.get(i));
                }
            }
            // The second NMS ordered them unchanged first; the result goes best first. (Stable: ties keep it.)
            again.sort((a, b) -> Float.compare(b.candidate().iou(), a.candidate().iou()));
            finished = again;
        }
        List<GeneratedMask> out = new ArrayList<>(finished.size());
        for (Finished f : finished) {
            Candidate c = f.candidate();
            out.add(new GeneratedMask(c.lowRes(), c.iou(), c.stability(), f.extent().box(), f.extent().area(),
                    c.point().clone(), CocoRle.ofMask(f.mask(), h, w)));
        }
        return out;
    }

    private static double[][] boxes(List<Candidate> candidates) {
        double[][] boxes = new double[candidates.size()][];
        for (int i = 0; i < boxes.length; i++) {
            boxes[i] = candidates.get(i).extent().inclusiveBox();
        }
        return boxes;
    }

    private static float[] ious(List<Candidate> candidates) {
        float[] scores = new float[candidates.size()];
        for (int i = 0; i < scores.length; i++) {
            scores[i] = candidates.get(i).iou();
        }
        return scores;
    }

    private static <T> List<T> select(List<T> items, int[] indices) {
        List<T> out = new ArrayList<>(indices.length);
        for (int i : indices) {
            out.add(items.get(i));
        }
        return out;
    }

    private record Finished(Candidate candidate, boolean[] mask, MaskExtent extent, boolean changed) {}

    private record Candidate(Tensor lowRes, float iou, float stability, MaskExtent extent, double[] point) {}
}
