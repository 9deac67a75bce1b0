package io.samstream.stream.cli;

import io.samstream.config.ConfigLoader;
import io.samstream.config.Device;
import io.samstream.config.ModelPrecision;
import io.samstream.config.ModelSparsity;
import io.samstream.config.SamstreamConfig;
import io.samstream.gpu.ModelCheckpoints;
import io.samstream.gpu.SamModels;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.sam.CudaSamBackend;
import io.samstream.gpu.image.ImageFiles;
import io.samstream.gpu.image.ImageReadException;
import io.samstream.gpu.image.ResizeLongestSide;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.predict.AutomaticMaskGenerator;
import io.samstream.gpu.predict.GeneratedMask;
import io.samstream.gpu.predict.Prediction;
import io.samstream.gpu.predict.PromptSet;
import io.samstream.gpu.predict.SamPredictor;
import io.samstream.gpu.sam2.Sam2ImagePredictor;
import io.samstream.gpu.sam2.Sam2Model;
import io.samstream.gpu.sam3.ExemplarBox;
import io.samstream.gpu.sam3.Sam3Image;
import io.samstream.gpu.sam3.Sam3Result;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code samstream segment}: one image, any number of prompt sets, masks out. The image is encoded
 * once; every prompt set (from {@code --prompts}, then the one the flags make) is decoded against it.
 */
@Command(
        name = "segment",
        mixinStandardHelpOptions = true,
        description = {
            "Segment one image with SAM, SAM 2.1 or SAM 3 (told from the checkpoint): encode it once, decode every"
                    + " prompt set; with SAM 3, --text finds every instance of a phrase.",
            "Coordinates are in original image pixels. Writes DIR/masks.json (COCO RLE masks, predicted IoU,"
                    + " boxes) and, with --npy, the reference predictor's arrays.",
            "With --auto, no prompts: every object, found by SAM's automatic mask generation."
        })
final class SegmentCommand implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(SegmentCommand.class);

    @Spec
    CommandSpec spec;

    @Option(names = "--checkpoint", paramLabel = "CKPT",
            description = "SAM or SAM 2.1 checkpoint (.pth/.pt as released by Meta, or .safetensors; which model is read from its keys)."
                    + " Default: samstream.model.checkpoint.")
    Path checkpoint;

    @Option(names = "--image", required = true, paramLabel = "IMG", description = "PNG or JPEG image.")
    Path image;

    @Option(names = "--max-pixels", paramLabel = "N",
            description = "Refuse an image of more than N pixels (width x height, read from its header before"
                    + " decoding; default: ${DEFAULT-VALUE}, two 8K frames).")
    long maxPixels = ImageFiles.DEFAULT_MAX_PIXELS;

    @Option(names = "--point", paramLabel = "X,Y[,LABEL]", converter = PointConverter.class,
            description = "A point prompt; LABEL 1 (default) = foreground, 0 = background. Repeatable.")
    List<double[]> points = new ArrayList<>();

    @Option(names = "--box", paramLabel = "X0,Y0,X1,Y1", converter = BoxConverter.class, description = "A box prompt.")
    BoxConverter.Box box;

    @Option(names = "--multimask", description = "Return the 3 multimask outputs for the flags' prompt set.")
    boolean multimask;

    @Option(names = "--prompts", paramLabel = "PROMPTS.json",
            description = "JSON array of prompt sets {\"points\",\"labels\",\"box\",\"multimask\"}.")
    Path promptsFile;

    @Option(names = "--text", paramLabel = "PHRASE",
            description = "SAM 3 checkpoints: find every instance of a noun phrase (\"person\", \"red car\"); with"
                    + " --box, that box is an exemplar of what to find. Reads the vocabulary next to the checkpoint.")
    String text;

    @Option(names = "--text-threshold", paramLabel = "T",
            description = "--text: keep instances scored above T (default: ${DEFAULT-VALUE}, Meta's processor's).")
    float textThreshold = Sam3Image.DEFAULT_THRESHOLD;

    @Option(names = "--auto", description = "Find every object: SAM's automatic mask generation (point grid,"
            + " filters, box NMS) instead of prompts.")
    boolean auto;

    @Option(names = "--points-per-side", paramLabel = "N",
            description = "--auto: the point grid is N x N (default: ${DEFAULT-VALUE}).")
    int pointsPerSide = AutomaticMaskGenerator.Settings.defaults().pointsPerSide();

    @Option(names = "--pred-iou-thresh", paramLabel = "T",
            description = "--auto: keep masks whose predicted IoU is above T (default: ${DEFAULT-VALUE}).")
    float predIouThreshold = AutomaticMaskGenerator.Settings.defaults().predIouThreshold();

    @Option(names = "--stability-thresh", paramLabel = "T",
            description = "--auto: keep masks whose stability score is at least T (default: ${DEFAULT-VALUE}).")
    float stabilityThreshold = AutomaticMaskGenerator.Settings.defaults().stabilityThreshold();

    @Option(names = "--box-nms-thresh", paramLabel = "T",
            description = "--auto: drop a mask whose box IoU with a better one is above T"
                    + " (default: ${DEFAULT-VALUE}).")
    float boxNmsThreshold = AutomaticMaskGenerator.Settings.defaults().boxNmsThreshold();

    @Option(names = "--min-area", paramLabel = "PX",
            description = "--auto: remove islands and fill holes under PX pixels, drop masks under PX pixels"
                    + " (default: ${DEFAULT-VALUE}, off).")
    int minArea = AutomaticMaskGenerator.Settings.defaults().minArea();

    @Option(names = "--device", paramLabel = "auto|cpu|cuda", description = "Where the model runs. Default: samstream.device.")
    String device;

    @Option(names = "--threads", paramLabel = "N", description = "CPU backend threads. Default: samstream.cpu.threads.")
    Integer threads;

    @Option(names = {"-c", "--config"}, paramLabel = "FILE", description = "Configuration file (HOCON).")
    Path configFile;

    @Option(names = "--sparsity", paramLabel = "none|2:4",
            description = "Encoder weight sparsity (2:4: prune at load; layers from samstream.model.sparse-layers)."
                    + " Default: samstream.model.sparsity.")
    String sparsity;

    @Option(names = "--npy", description = "Also write embedding.npy and prompt-<i>/{masks,iou,lowres}.npy.")
    boolean npy;

    @Option(names = "--out", required = true, paramLabel = "DIR", description = "Output directory.")
    Path out;

    /** How many of the prompt sets came from --prompts (for error messages). */
    private int fileSetCount;

    @Override
    public Integer call() throws Exception {
        SamstreamConfig config = configFile == null ? ConfigLoader.load() : ConfigLoader.load(configFile);
        AutomaticMaskGenerator.Settings autoSettings = auto ? autoSettings() : null;
        List<PromptSet> sets = auto || text != null ? List.of() : promptSets();
        checkOut();
        Path ckpt = checkpoint != null ? checkpoint : config.checkpoint().orElseThrow(() -> new ParameterException(
                spec.commandLine(), "no checkpoint: give --checkpoint or set samstream.model.checkpoint"));
        Device dev = device == null ? config.device() : Device.parse(device, "--device");
        int nThreads = threads == null ? config.cpuThreads() : threads;
        if (nThreads <= 0) {
            throw new ParameterException(spec.commandLine(), "--threads must be positive, got " + nThreads);
        }

        if (maxPixels <= 0) {
            throw new ParameterException(spec.commandLine(), "--max-pixels must be positive, got " + maxPixels);
        }
        RgbImage rgb = ImageFiles.read(image, maxPixels);
        for (int i = 0; i < sets.size(); i++) {
            try {
                sets.get(i).validate(rgb.width(), rgb.height());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(describeSet(i) + ": " + e.getMessage());
            }
        }

        ModelSparsity sparse = sparsity == null ? config.sparsity()
                : ModelSparsity.parse(sparsity, config.sparsity().layers().name(), "--sparsity", "sparse-layers");
        StateDict weights = ModelCheckpoints.load(ckpt);
        ModelCheckpoints.Family family = ModelCheckpoints.family(weights);
        if (family == ModelCheckpoints.Family.SAM3) {
            return segmentSam3(ckpt, weights, rgb, dev, nThreads, config.cuda().precision());
        }
        if (text != null) {
            throw new ParameterException(spec.commandLine(), "--text needs a SAM 3 checkpoint; " + ckpt + " is a "
                    + family.label() + " checkpoint (give it --point, --box, --prompts or --auto)");
        }
        if (family == ModelCheckpoints.Family.SAM2) {
            return segmentSam2(ckpt, weights, rgb, sets, dev, nThreads, sparse);
        }
        try (SamBackend backend = SamModels.open(weights, dev, nThreads, 1, sparse, CudaSamBackend.DEFAULT_RING_BATCHES,
                config.cuda())) { // batch 1: one image
            checkResizable(rgb, backend.config().imageSize());
            SamPredictor predictor = new SamPredictor(backend);
            long t0 = System.nanoTime();
            predictor.setImage(rgb);
            log.info("encoded {} ({}x{}) in {} ms", image.getFileName(), rgb.width(), rgb.height(),
                    (System.nanoTime() - t0) / 1_000_000);
            if (auto) {
                long t1 = System.nanoTime();
                StepProgress progress = new StepProgress(spec.commandLine().getErr(),
                        "automatic mask generation, grid points decoded", StepProgress.EVERY, true);
                List<GeneratedMask> masks = new AutomaticMaskGenerator(backend, autoSettings)
                        .onProgress(progress::step)
                        .generate(predictor.embedding(), rgb.width(), rgb.height());
                int points = autoSettings.pointsPerSide() * autoSettings.pointsPerSide();
                log.info("automatic mask generation: {} masks from {} points in {} ms", masks.size(), points,
                        (System.nanoTime() - t1) / 1_000_000);
                new SegmentOutput(out).writeAutoMasksJson(image, ckpt, backend, rgb.width(), rgb.height(),
                        autoSettings, masks);
                spec.commandLine().getOut().printf("%d mask(s) -> %s%n", masks.size(), out.resolve("masks.json"));
                return 0;
            }
            List<Prediction> predictions = decodeAll(sets, predictor::predict);
            SegmentOutput output = new SegmentOutput(out);
            output.writeMasksJson(image, ckpt, backend, sets, predictions);
            if (npy) {
                output.writeNpy(predictor.embedding(), predictions);
            }
            spec.commandLine().getOut().printf("%d prompt set(s) -> %s%n", sets.size(), out.resolve("masks.json"));
        }
        return 0;
    }

    /** Every prompt set decoded in order, with progress on stderr for long jobs. */
    private List<Prediction> decodeAll(List<PromptSet> sets, java.util.function.Function<PromptSet, Prediction> predict) {
        List<Prediction> predictions = new ArrayList<>();
        StepProgress progress = new StepProgress(spec.commandLine().getErr(), "prompt sets decoded", StepProgress.EVERY,
                false);
        for (PromptSet set : sets) {
            predictions.add(predict.apply(set));
            progress.step(predictions.size(), sets.size());
        }
        return predictions;
    }

    /**
     * A SAM 2.1 checkpoint: the image through {@link Sam2ImagePredictor}, its image encoder on the GPU with
     * {@code --device cuda} (or {@code auto} and a usable GPU; the decoder on the CPU), every prompt set decoded,
     * masks.json written as for SAM. --auto, --npy and 2:4 sparsity are SAM's only; asking for them is an error
     * saying so.
     */
    private int segmentSam2(Path ckpt, StateDict weights, RgbImage rgb, List<PromptSet> sets, Device dev, int nThreads,
            ModelSparsity sparse) throws Exception {
        String what = ckpt + " is a SAM 2.1 checkpoint: ";
        if (auto) {
            throw new ParameterException(spec.commandLine(), what + "--auto (automatic mask generation) needs SAM");
        }
        if (npy) {
            throw new ParameterException(spec.commandLine(), what + "--npy writes SAM's predictor arrays; not for SAM 2.1");
        }
        if (sparse.twoFour()) {
            throw new ParameterException(spec.commandLine(), what + "2:4 sparsity applies to SAM's encoder only");
        }
        try (Sam2Model model = ModelCheckpoints.openSam2(weights, nThreads, dev, 0)) {
            Sam2ImagePredictor predictor = new Sam2ImagePredictor(model);
            long t0 = System.nanoTime();
            predictor.setImage(rgb);
            log.info("encoded {} ({}x{}) in {} ms", image.getFileName(), rgb.width(), rgb.height(),
                    (System.nanoTime() - t0) / 1_000_000);
            List<Prediction> predictions = decodeAll(sets, predictor::predict);
            new SegmentOutput(out).writeMasksJson(image, ckpt, model.config().toString(), model.describe(), sets,
                    predictions);
            spec.commandLine().getOut().printf("%d prompt set(s) -> %s%n", sets.size(), out.resolve("masks.json"));
        }
        return 0;
    }

    /**
     * A SAM 3 checkpoint: the image through {@link Sam3Image} on the CPU reference (Meta's Sam3Processor: every
     * instance of the {@code --text} phrase, a {@code --box} as a positive exemplar), masks.json with the concept and
     * its instances. Points, --prompts, --auto, --multimask, --npy and 2:4 sparsity are the other models'; asking for
     * them is an error naming the flag.
     */
    private int segmentSam3(Path ckpt, StateDict weights, RgbImage rgb, Device dev, int nThreads,
                            ModelPrecision precision) throws Exception {
        String what = ckpt + " is a SAM 3 checkpoint: ";
        if (text == null || text.isBlank()) {
            throw new ParameterException(spec.commandLine(), what + "give the phrase to find with --text");
        }
        if (!points.isEmpty() || promptsFile != null || auto || multimask || npy) {
            throw new ParameterException(spec.commandLine(), what + "--text (with an optional --box exemplar) is its"
                    + " prompt; --point, --prompts, --auto, --multimask and --npy are SAM's and SAM 2.1's");
        }
        if (!(textThreshold >= 0f && textThreshold <= 1f)) {
            throw new ParameterException(spec.commandLine(), "--text-threshold must be in [0, 1], got " + textThreshold);
        }
        List<ExemplarBox> exemplars = new ArrayList<>();
        List<float[]> boxes = new ArrayList<>();
        if (box != null) {
            double[] c = box.corners();
            if (c[0] >= c[2] || c[1] >= c[3] || c[2] <= 0 || c[3] <= 0 || c[0] >= rgb.width() || c[1] >= rgb.height()) {
                throw new ParameterException(spec.commandLine(), "--box " + java.util.Arrays.toString(c)
                        + " must have x0 < x1, y0 < y1 and overlap the " + rgb.width() + " x " + rgb.height() + " image");
            }
            exemplars.add(ExemplarBox.fromCorners((float) c[0], (float) c[1], (float) c[2], (float) c[3], rgb.width(),
                    rgb.height(), true));
            boxes.add(new float[] {(float) c[0], (float) c[1], (float) c[2], (float) c[3]});
        }
        Sam3Tokenizer tokenizer = Sam3Tokenizer.forCheckpoint(ckpt);
        try (Sam3Image sam3 = new Sam3Image(ModelCheckpoints.openSam3(weights, nThreads, dev, 0, precision),
                tokenizer)) {
            long t0 = System.nanoTime();
            Sam3Image.Encoded encoded = sam3.encode(rgb);
            log.info("encoded {} ({}x{}) in {} ms", image.getFileName(), rgb.width(), rgb.height(),
                    (System.nanoTime() - t0) / 1_000_000);
            Sam3Result result = sam3.find(encoded, text, exemplars, textThreshold);
            new SegmentOutput(out).writeConceptMasksJson(image, ckpt, sam3.model().config().toString(),
                    sam3.model().describe(), rgb.width(), rgb.height(), text, boxes, textThreshold,
                    result);
            spec.commandLine().getOut().printf("\"%s\": %d instance(s), presence %.3f -> %s%n", text,
                    result.instances().size(), result.presence(), out.resolve("masks.json"));
        }
        return 0;
    }

    /**
     * Whether the masks can be written to {@code --out}, before the image is read and the model loads: it is
     * a writable directory, or one can be made there (its nearest existing parent is a writable directory).
     */
    private void checkOut() {
        Path dir = out.toAbsolutePath().normalize();
        Path existing = dir;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        String problem = null;
        if (existing == null) {
            problem = "no part of the path exists";
        } else if (!Files.isDirectory(existing)) {
            problem = existing.equals(dir) ? "is a file, not a directory" : existing + " is a file, not a directory";
        } else if (!Files.isWritable(existing)) {
            problem = existing.equals(dir) ? "is not writable" : "cannot be made: " + existing + " is not writable";
        }
        if (problem != null) {
            throw new IllegalArgumentException("--out " + out + ": " + problem);
        }
    }

    /** An image too thin for the model input (e.g. 100000 x 1) is an error naming it, not a bare size. */
    private void checkResizable(RgbImage rgb, int inputSize) {
        try {
            ResizeLongestSide.preprocessShape(rgb.height(), rgb.width(), inputSize);
        } catch (IllegalArgumentException e) {
            throw new ImageReadException(image, "cannot be segmented: " + e.getMessage());
        }
    }

    /** The generator's settings from the flags; prompts and --npy do not go with --auto. */
    private AutomaticMaskGenerator.Settings autoSettings() {
        if (!points.isEmpty() || box != null || promptsFile != null || multimask) {
            throw new ParameterException(spec.commandLine(),
                    "--auto finds objects without prompts: drop --point, --box, --prompts and --multimask");
        }
        if (npy) {
            throw new ParameterException(spec.commandLine(), "--npy writes the predictor's arrays of prompt sets;"
                    + " it does not go with --auto");
        }
        AutomaticMaskGenerator.Settings d = AutomaticMaskGenerator.Settings.defaults();
        try {
            return new AutomaticMaskGenerator.Settings(pointsPerSide, d.pointsPerBatch(), predIouThreshold,
                    stabilityThreshold, d.stabilityOffset(), boxNmsThreshold, minArea);
        } catch (IllegalArgumentException e) {
            // The settings name their fields; say which flag that is.
            String message = e.getMessage();
            String[][] flags = {{"pointsPerSide", "--points-per-side"}, {"predIouThreshold", "--pred-iou-thresh"},
                {"stabilityThreshold", "--stability-thresh"}, {"boxNmsThreshold", "--box-nms-thresh"},
                {"minArea", "--min-area"}};
            for (String[] f : flags) {
                if (message.startsWith(f[0] + " ")) {
                    message = f[1] + message.substring(f[0].length());
                }
            }
            throw new ParameterException(spec.commandLine(), message);
        }
    }

    /** The file's sets first, then the one the flags make. */
    private List<PromptSet> promptSets() {
        List<PromptSet> sets = new ArrayList<>();
        if (promptsFile != null) {
            sets.addAll(PromptSetsJson.read(promptsFile));
            fileSetCount = sets.size();
        }
        if (points.size() > PromptSetsJson.MAX_POINTS) {
            throw new ParameterException(spec.commandLine(), points.size() + " --point prompts, at most "
                    + PromptSetsJson.MAX_POINTS + " are allowed");
        }
        if (!points.isEmpty() || box != null) {
            double[][] xy = points.isEmpty() ? null : new double[points.size()][];
            int[] labels = points.isEmpty() ? null : new int[points.size()];
            for (int i = 0; i < points.size(); i++) {
                xy[i] = new double[] {points.get(i)[0], points.get(i)[1]};
                labels[i] = (int) points.get(i)[2];
            }
            sets.add(new PromptSet(xy, labels, box == null ? null : box.corners(), multimask));
        } else if (multimask) {
            throw new ParameterException(spec.commandLine(), "--multimask applies to --point/--box prompts; none given");
        }
        if (sets.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "no prompt: give --point, --box or --prompts (or --auto)");
        }
        return sets;
    }

    private String describeSet(int i) {
        return i < fileSetCount ? promptsFile + ": prompt set " + i : "--point/--box prompt";
    }
}
