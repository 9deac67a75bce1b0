package io.samstream.gpu.parity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.config.Device;
import io.samstream.gpu.SamModels;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuSamBackend;
import io.samstream.gpu.cuda.CudaAvailability;
import io.samstream.gpu.cuda.GpuTests;
import io.samstream.gpu.cuda.CudaSamBackend;
import io.samstream.gpu.image.ImageFiles;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.model.RandomSamWeights;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.model.SamConfigInference;
import io.samstream.gpu.predict.Prediction;
import io.samstream.gpu.predict.PromptSet;
import io.samstream.gpu.predict.SamPredictor;
import io.samstream.gpu.tensor.Npy;
import io.samstream.gpu.tensor.NpyArray;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.testkit.Fixtures;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The CUDA backend (bf16 image encoder) against the CPU fp32 backend and Meta's reference fixtures:
 * <ul>
 *   <li>every fixture case through {@link SamPredictor} on CUDA: embedding cosine >= 0.999 against the
 *       reference and against the CPU backend on the same input; every mask IoU >= 0.98 and predicted IoU
 *       within 0.02 of the reference's (the bf16 bounds of issue 3);</li>
 *   <li>a random model of vit_b's widths (768, 12 heads of 64, MLP 3072, 12 blocks, window 14, global 2/5/8/11,
 *       neck 256) at 512 px, batch 2: cosine >= 0.999 per image against the CPU backend;</li>
 *   <li>bad input (batch above the configured one, wrong size) is refused and leaves the backend usable.</li>
 * </ul>
 * Skips with {@link CudaAvailability}'s reason where no GPU is usable (CI). Fixtures are read from
 * {@code -Dsamstream.fixtures} (default: the module's own, {@link Fixtures#gpuFixtures()}).
 */
@Tag("gpu")
class CudaParityGpuTest {
    static final Path FIXTURES = Fixtures.gpuFixtures();
    static final int THREADS = Runtime.getRuntime().availableProcessors();

    @BeforeEach
    void requireGpu() {
        GpuTests.assumeGpu();
    }

    @TestFactory
    Stream<DynamicNode> everyReferenceCaseOnCuda() throws IOException {
        GpuTests.assumeGpu();
        JsonNode manifest = new ObjectMapper().readTree(FIXTURES.resolve("manifest.json").toFile());
        List<DynamicNode> configs = new ArrayList<>();
        for (Map.Entry<String, JsonNode> entry : manifest.get("configs").properties()) {
            String name = entry.getKey();
            Path model = FIXTURES.resolve(name).resolve("model.pth");
            List<DynamicNode> tests = new ArrayList<>();
            for (JsonNode c : entry.getValue().get("cases")) {
                Path dir = FIXTURES.resolve(name).resolve(c.get("name").asText());
                tests.add(dynamicTest(c.get("name").asText(), () -> {
                    StateDict weights = CheckpointLoader.load(model);
                    SamConfig config = SamConfigInference.infer(weights);
                    try (CpuSamBackend cpu = new CpuSamBackend(weights, config, THREADS);
                         CudaSamBackend cuda = new CudaSamBackend(weights, config, 2, THREADS)) {
                        checkCase(cpu, cuda, dir);
                    }
                }));
            }
            configs.add(DynamicContainer.dynamicContainer(name, tests));
        }
        return configs.stream();
    }

    static void checkCase(CpuSamBackend cpu, CudaSamBackend cuda, Path dir) throws IOException {
        RgbImage image = ImageFiles.read(dir.resolve("image.png"));
        Map<String, NpyArray> expected = Npy.readNpz(dir.resolve("expected.npz"));
        List<PromptSet> sets = PromptSetsFixture.read(dir.resolve("prompts.json"));
        SamPredictor predictor = new SamPredictor(cuda);
        predictor.setImage(image);
        SamPredictor cpuPredictor = new SamPredictor(cpu);
        cpuPredictor.setImage(image);

        NpyArray refEmbedding = expected.get("embedding");
        assertArrayEquals(refEmbedding.shape(), predictor.embedding().shape(), "embedding shape");
        double cosRef = SamReferenceParityTest.cosine(refEmbedding.toFloats(), predictor.embedding().data());
        double cosCpu = SamReferenceParityTest.cosine(cpuPredictor.embedding().data(), predictor.embedding().data());
        StringBuilder report = new StringBuilder(String.format(Locale.ROOT,
                "%s [cuda]: embedding cosine %.6f vs reference, %.6f vs cpu", dir, cosRef, cosCpu));
        assertTrue(cosRef >= 0.999 && cosCpu >= 0.999, report.toString());

        double worstIou = 1, worstPred = 0;
        for (int i = 0; i < sets.size(); i++) {
            Prediction p = predictor.predict(sets.get(i));
            NpyArray refMasks = expected.get("masks_" + i);
            float[] refIou = expected.get("iou_" + i).toFloats();
            assertArrayEquals(refMasks.shape(), new int[] {p.count(), p.height(), p.width()}, "masks shape, set " + i);
            boolean[] ref = refMasks.toBooleans();
            int plane = p.width() * p.height();
            for (int m = 0; m < p.count(); m++) {
                double iou = SamReferenceParityTest.maskIou(ref, m * plane, p.masks()[m]);
                double iouError = Math.abs(refIou[m] - p.iouPredictions()[m]);
                worstIou = Math.min(worstIou, iou);
                worstPred = Math.max(worstPred, iouError);
                report.append(String.format(Locale.ROOT, "%n  set %d mask %d: mask IoU %.5f, predicted IoU %.5f vs %.5f",
                        i, m, iou, p.iouPredictions()[m], refIou[m]));
                assertTrue(iou >= 0.98, report.toString());
                assertTrue(iouError <= 0.02, report.toString());
            }
        }
        report.append(String.format(Locale.ROOT, "%n  worst mask IoU %.5f, worst predicted-IoU error %.5f", worstIou,
                worstPred));
        System.out.println(report);
    }

    /**
     * vit_b's encoder widths and attention layout (768, 12 heads of 64, MLP 3072, 12 blocks, window 14, global
     * 2/5/8/11, neck 256) at 512 px (a 32 x 32 grid: padded 3 x 3 windows, 32 x 32 global attention), so that
     * the CPU reference stays a few seconds on the GPU machine. The 64 x 64 global kernel is covered by
     * AttentionGpuTest.
     */
    static SamConfig vitBShaped() {
        return new SamConfig(512, 16, 768, 12, 12, 3072, 14, new int[] {2, 5, 8, 11}, 256, 16, 2, 8, 2048, 2, 3, 3,
                256);
    }

    @Test
    void vitBShapedRandomModelAtBatch2MatchesTheCpu() {
        SamConfig config = vitBShaped();
        StateDict weights = RandomSamWeights.stateDict(config, 3);
        int s = config.imageSize();
        Tensor images = randomImages(2, s, 11);
        long t0 = System.nanoTime();
        Tensor want;
        try (CpuSamBackend cpu = new CpuSamBackend(weights, config, THREADS)) {
            want = cpu.encode(images);
        }
        long t1 = System.nanoTime();
        try (CudaSamBackend cuda = new CudaSamBackend(weights, config, 2, 1)) {
            Tensor got = cuda.encode(images);
            long t2 = System.nanoTime();
            assertArrayEquals(want.shape(), got.shape());
            int per = got.size() / 2;
            StringBuilder report = new StringBuilder(String.format(Locale.ROOT,
                    "vit_b-shaped random model, 512 px, batch 2: cpu %.1f s, cuda %.2f s (incl. first launch)",
                    (t1 - t0) / 1e9, (t2 - t1) / 1e9));
            double worst = 1;
            for (int b = 0; b < 2; b++) {
                float[] w = java.util.Arrays.copyOfRange(want.data(), b * per, (b + 1) * per);
                float[] g = java.util.Arrays.copyOfRange(got.data(), b * per, (b + 1) * per);
                double cos = SamReferenceParityTest.cosine(w, g);
                worst = Math.min(worst, cos);
                report.append(String.format(Locale.ROOT, "%n  image %d: cosine %.6f, max |diff| %.4f (max |ref| %.3f)", b,
                        cos, maxAbsDiff(w, g), maxAbs(w)));
            }
            System.out.println(report);
            assertTrue(worst >= 0.999, report.toString());

            // The same images one at a time give the same embeddings (batching is by index, nothing shared).
            Tensor first = cuda.encode(new Tensor(java.util.Arrays.copyOf(images.data(), 3 * s * s), 1, 3, s, s));
            float[] g0 = java.util.Arrays.copyOf(got.data(), per);
            assertTrue(SamReferenceParityTest.cosine(g0, first.data()) > 0.99999, "batch 1 vs batch 2 image 0");
        }
    }

    /** A replayed CUDA graph computes exactly what the same kernels queued one by one compute, at two batch sizes. */
    @Test
    void graphReplayMatchesEagerPasses() throws IOException {
        StateDict weights = CheckpointLoader.load(FIXTURES.resolve("tiny256").resolve("model.pth"));
        SamConfig config = SamConfigInference.infer(weights);
        int s = config.imageSize();
        try (CudaSamBackend cuda = new CudaSamBackend(weights, config, 3, 1)) {
            for (int batch : new int[] {3, 1, 3}) {
                Tensor images = randomImages(batch, s, 20 + batch);
                Tensor eager = cuda.encode(images, false);
                Tensor graph = cuda.encode(images, true);
                assertArrayEquals(eager.data(), graph.data(), 0f, "batch " + batch + ": graph replay vs eager");
                Tensor again = cuda.encode(images, true);
                assertArrayEquals(graph.data(), again.data(), 0f, "batch " + batch + ": second replay");
            }
        }
    }

    @Test
    void badInputIsRefusedAndLeavesTheBackendUsable() throws IOException {
        StateDict weights = CheckpointLoader.load(FIXTURES.resolve("tiny256").resolve("model.pth"));
        SamConfig config = SamConfigInference.infer(weights);
        int s = config.imageSize();
        try (CudaSamBackend cuda = new CudaSamBackend(weights, config, 2, 1)) {
            Tensor ok = randomImages(1, s, 5);
            Tensor before = cuda.encode(ok);
            IllegalArgumentException tooMany = assertThrows(IllegalArgumentException.class,
                    () -> cuda.encode(randomImages(3, s, 6)));
            assertTrue(tooMany.getMessage().contains("at most 2"), tooMany.getMessage());
            assertThrows(IllegalArgumentException.class, () -> cuda.encode(Tensor.zeros(1, 3, s, s + 16)));
            assertThrows(IllegalArgumentException.class, () -> cuda.encode(Tensor.zeros(1, 4, s, s)));
            Tensor after = cuda.encode(ok);
            assertArrayEquals(before.data(), after.data(), 0f);
        }
    }

    @Test
    void deviceCudaOpensTheCudaBackend() {
        try (SamBackend b = SamModels.open(FIXTURES.resolve("tiny256").resolve("model.pth"), Device.CUDA, 2, 1)) {
            assertTrue(b instanceof CudaSamBackend, b.name());
        }
        try (SamBackend b = SamModels.open(FIXTURES.resolve("tiny256").resolve("model.pth"), Device.AUTO, 2, 1)) {
            assertTrue(b instanceof CudaSamBackend, b.name());
        }
    }

    static Tensor randomImages(int batch, int s, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] v = new float[batch * 3 * s * s];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) (r.nextDouble() * 4 - 2);   // normalized pixels are roughly in [-2, 2.6]
        }
        return new Tensor(v, batch, 3, s, s);
    }

    static double maxAbsDiff(float[] a, float[] b) {
        double m = 0;
        for (int i = 0; i < a.length; i++) {
            m = Math.max(m, Math.abs((double) a[i] - b[i]));
        }
        return m;
    }

    static double maxAbs(float[] a) {
        double m = 0;
        for (float v : a) {
            m = Math.max(m, Math.abs(v));
        }
        return m;
    }
}
