package io.samstream.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.config.Device;
import io.samstream.config.ModelSparsity;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.connectors.video.TestPatternSource.PatternObject;
import io.samstream.gpu.SamModels;
import io.samstream.gpu.image.ImageFiles;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.predict.Prediction;
import io.samstream.gpu.predict.PromptSet;
import io.samstream.gpu.predict.SamPredictor;
import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Accuracy of 2:4 sparsity (pruning at load, no fine-tuning) on the CPU backend, which runs the exact
 * sparse model: for each model and layer choice (all encoder linears, MLPs only), the image embedding's
 * cosine to the dense model's, and mask IoU of the sparse model against the dense one and, on
 * test-pattern frames, against the ground truth.
 *
 * <ul>
 *   <li>reference fixtures {@code gpu/src/test/resources/fixtures/{tiny256,small1024}}: every case's image
 *       and prompt sets (random-weight models: their masks mean nothing, only the agreement does);</li>
 *   <li>the bundled demo model {@code examples/sam-demo-synthetic.pth} on {@link TestPatternSource} frames
 *       (320x240, 2 seeds x 3 frames), one prompt per shape (its centre point and its box, single mask);
 *       ground truth = the shape's visible pixels (its colour inside its box: shapes are solid colours
 *       drawn over a textured background, later ones covering earlier ones).</li>
 * </ul>
 *
 * <pre>java -cp ... io.samstream.bench.SparseAccuracy OUT.md [threads]</pre>
 * (from the repository root; {@code bench/results/sparse-accuracy.md} is its output).
 */
public final class SparseAccuracy {
    private static final Path FIXTURES = Path.of("gpu/src/test/resources/fixtures");
    private static final Path DEMO = Path.of("examples/sam-demo-synthetic.pth");
    private static final ModelSparsity ALL = new ModelSparsity(true, ModelSparsity.Layers.ALL);
    private static final ModelSparsity MLP = new ModelSparsity(true, ModelSparsity.Layers.MLP);

    private SparseAccuracy() {}

    /** Running means (and minimum) of one measure. */
    private static final class Stat {
        double sum, min = Double.POSITIVE_INFINITY;
        int n;

        void add(double v) {
            sum += v;
            min = Math.min(min, v);
            n++;
        }

        String mean() {
            return n == 0 ? "-" : String.format(Locale.ROOT, "%.3f", sum / n);
        }

        String minimum() {
            return n == 0 ? "-" : String.format(Locale.ROOT, "%.3f", min);
        }
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            System.err.println("usage: SparseAccuracy OUT.md [threads]");
            System.exit(2);
        }
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : Runtime.getRuntime().availableProcessors();
        StringBuilder md = new StringBuilder();
        md.append("# 2:4 sparsity: accuracy without fine-tuning (CPU fp32, the exact sparse model)\n\n")
                .append("Written by `io.samstream.bench.SparseAccuracy` (rerun: see its class doc). Pruning: in every group")
                .append(" of four input features of each pruned encoder Linear, the two largest magnitudes are kept.\n")
                .append("`all` = attn.qkv, attn.proj, mlp.lin1, mlp.lin2 of every block; `mlp` = mlp.lin1, mlp.lin2.\n")
                .append("Embedding cosine: sparse vs dense image embedding. IoU sparse/dense: every mask of every prompt")
                .append(" set. IoU vs truth: the shape's visible pixels (test patterns only).\n\n")
                .append("| model | images | layers | embedding cosine (mean / min) | mask IoU sparse vs dense (mean / min)")
                .append(" | masks | IoU dense vs truth | IoU sparse vs truth |\n|---|---|---|---|---|---|---|---|\n");
        for (String fixture : new String[] {"tiny256", "small1024"}) {
            Path model = FIXTURES.resolve(fixture).resolve("model.pth");
            List<Path> cases = cases(FIXTURES.resolve(fixture));
            for (ModelSparsity s : new ModelSparsity[] {ALL, MLP}) {
                md.append(fixtureRow(fixture + " (random weights)", model, cases, s, threads));
                System.out.print(md);
            }
        }
        for (ModelSparsity s : new ModelSparsity[] {ALL, MLP}) {
            md.append(demoRow(s, threads));
            System.out.print(md);
        }
        md.append("\nReading it: the random-weight fixtures have no structure for the pruned weights to lose")
                .append(" gracefully (random weights have no small ones to drop, so pruning removes a sizeable share of every row), so they show the worst case;")
                .append(" their masks mean nothing, only the agreement does. The demo model is trained (on synthetic")
                .append(" scenes) and shows what pruning a trained encoder without fine-tuning costs there. Neither")
                .append(" is an official SAM checkpoint (none is available offline): rerun this on vit_b before")
                .append(" relying on 2:4 for real footage; SparseGPT-style or fine-tuned pruning would recover more.\n")
                .append("\nCommand: `java -cp ... io.samstream.bench.SparseAccuracy bench/results/sparse-accuracy.md ")
                .append(threads).append("` from the repository root (CPU only; a few minutes on 2 cores).\n");
        Files.writeString(Path.of(args[0]), md.toString());
        System.out.println("wrote " + args[0]);
    }

    private static List<Path> cases(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> Files.exists(p.resolve("prompts.json")) && Files.exists(p.resolve("image.png")))
                    .sorted().toList();
        }
    }

    private static String fixtureRow(String name, Path model, List<Path> cases, ModelSparsity s, int threads)
            throws IOException {
        Stat cos = new Stat(), iou = new Stat();
        try (SamBackend dense = SamModels.open(model, Device.CPU, threads, 1, ModelSparsity.NONE);
             SamBackend sparse = SamModels.open(model, Device.CPU, threads, 1, s)) {
            for (Path c : cases) {
                RgbImage image = ImageFiles.read(c.resolve("image.png"));
                List<PromptSet> sets = prompts(c.resolve("prompts.json"));
                compare(dense, sparse, image, sets, null, cos, iou, null, null);
            }
        }
        return row(name, cases.size() + " fixture cases", s, cos, iou, null, null);
    }

    private static String demoRow(ModelSparsity s, int threads) throws IOException {
        Stat cos = new Stat(), iou = new Stat(), denseTruth = new Stat(), sparseTruth = new Stat();
        int images = 0;
        try (SamBackend dense = SamModels.open(DEMO, Device.CPU, threads, 1, ModelSparsity.NONE);
             SamBackend sparse = SamModels.open(DEMO, Device.CPU, threads, 1, s)) {
            for (long seed : new long[] {1, 2}) {
                TestPatternSource src = new TestPatternSource("acc", 320, 240, 10, 30, seed, false);
                for (long frame : new long[] {0, 10, 20}) {
                    RgbImage image = new RgbImage(320, 240, src.render(frame));
                    List<PatternObject> objects = src.objectsAt(frame);
                    List<PromptSet> sets = new ArrayList<>();
                    List<boolean[]> truths = new ArrayList<>();
                    for (PatternObject o : objects) {
                        boolean[] truth = truth(image, o);
                        int area = 0;
                        for (boolean b : truth) {
                            area += b ? 1 : 0;
                        }
                        if (area < 20 || !truth[o.centerY() * 320 + o.centerX()]) {
                            continue;   // hidden or mostly off-frame: no fair prompt
                        }
                        int[] b = o.box();
                        sets.add(new PromptSet(new double[][] {{o.centerX(), o.centerY()}}, new int[] {1},
                                new double[] {Math.max(0, b[0]), Math.max(0, b[1]), Math.min(319, b[2]),
                                    Math.min(239, b[3])}, false));
                        truths.add(truth);
                    }
                    compare(dense, sparse, image, sets, truths, cos, iou, denseTruth, sparseTruth);
                    images++;
                }
            }
        }
        return row("sam-demo-synthetic (trained)", images + " test-pattern frames", s, cos, iou, denseTruth, sparseTruth);
    }

    /** The shape's visible pixels: its colour, inside its box. */
    private static boolean[] truth(RgbImage image, PatternObject o) {
        boolean[] m = new boolean[image.width() * image.height()];
        int[] b = o.box();
        for (int y = Math.max(0, b[1]); y <= Math.min(image.height() - 1, b[3]); y++) {
            for (int x = Math.max(0, b[0]); x <= Math.min(image.width() - 1, b[2]); x++) {
                int rgb = image.get(x, y, 0) << 16 | image.get(x, y, 1) << 8 | image.get(x, y, 2);
                m[y * image.width() + x] = rgb == o.rgb();
            }
        }
        return m;
    }

    private static void compare(SamBackend dense, SamBackend sparse, RgbImage image, List<PromptSet> sets,
                                List<boolean[]> truths, Stat cos, Stat iou, Stat denseTruth, Stat sparseTruth) {
        SamPredictor pd = new SamPredictor(dense), ps = new SamPredictor(sparse);
        pd.setImage(image);
        ps.setImage(image);
        cos.add(cosine(pd.embedding(), ps.embedding()));
        for (int i = 0; i < sets.size(); i++) {
            Prediction a = pd.predict(sets.get(i)), b = ps.predict(sets.get(i));
            for (int m = 0; m < a.count(); m++) {
                iou.add(iou(a.masks()[m], b.masks()[m]));
            }
            if (truths != null) {
                denseTruth.add(iou(a.masks()[0], truths.get(i)));
                sparseTruth.add(iou(b.masks()[0], truths.get(i)));
            }
        }
    }

    private static String row(String model, String images, ModelSparsity s, Stat cos, Stat iou, Stat dt, Stat st) {
        return String.format(Locale.ROOT, "| %s | %s | %s | %s / %s | %s / %s | %d | %s | %s |%n", model, images,
                s.layers().name().toLowerCase(Locale.ROOT), cos.mean(), cos.minimum(), iou.mean(), iou.minimum(), iou.n,
                dt == null ? "-" : dt.mean(), st == null ? "-" : st.mean());
    }

    static double cosine(Tensor a, Tensor b) {
        double dot = 0, na = 0, nb = 0;
        float[] x = a.data(), y = b.data();
        for (int i = 0; i < x.length; i++) {
            dot += (double) x[i] * y[i];
            na += (double) x[i] * x[i];
            nb += (double) y[i] * y[i];
        }
        return dot / Math.sqrt(na * nb);
    }

    /** IoU of two masks; 1 when both are empty. */
    static double iou(boolean[] a, boolean[] b) {
        long inter = 0, union = 0;
        for (int i = 0; i < a.length; i++) {
            inter += a[i] && b[i] ? 1 : 0;
            union += a[i] || b[i] ? 1 : 0;
        }
        return union == 0 ? 1.0 : (double) inter / union;
    }

    private static List<PromptSet> prompts(Path file) throws IOException {
        JsonNode root = new ObjectMapper().readTree(Files.readString(file));
        List<PromptSet> sets = new ArrayList<>();
        for (JsonNode n : root) {
            JsonNode pts = n.get("points"), labels = n.get("labels"), box = n.get("box");
            double[][] points = null;
            int[] l = null;
            if (pts != null && !pts.isNull()) {
                points = new double[pts.size()][];
                l = new int[pts.size()];
                for (int i = 0; i < pts.size(); i++) {
                    points[i] = new double[] {pts.get(i).get(0).asDouble(), pts.get(i).get(1).asDouble()};
                    l[i] = labels.get(i).asInt();
                }
            }
            double[] bx = box == null || box.isNull() ? null
                    : new double[] {box.get(0).asDouble(), box.get(1).asDouble(), box.get(2).asDouble(),
                        box.get(3).asDouble()};
            sets.add(new PromptSet(points, l, bx, n.path("multimask").asBoolean(false)));
        }
        return sets;
    }
}
