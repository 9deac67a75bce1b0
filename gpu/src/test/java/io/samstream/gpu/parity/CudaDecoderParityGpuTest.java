package io.samstream.gpu.parity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuSamBackend;
import io.samstream.gpu.cuda.GpuTests;
import io.samstream.gpu.cuda.sam.CudaMaskDecoder;
import io.samstream.gpu.cuda.sam.CudaSamBackend;
import io.samstream.gpu.cuda.sam.CudaSamOptions;
import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.image.MaskPostprocessor;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.RandomSamWeights;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.model.SamConfigInference;
import io.samstream.gpu.tensor.Npy;
import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The GPU prompt encoder + mask decoder ({@link CudaMaskDecoder}, bf16 image side, fp32 token side) against
 * the CPU fp32 one, on the same embedding (the reference's, from the fixtures) so that only the decoder
 * differs:
 * <ul>
 *   <li>points only, box only, points + box, a mask input (the CPU's own low-res logits fed back, as
 *       tracking does), multimask and single-mask: low-res logits cosine >= 0.999, mask IoU >= 0.98 after
 *       post-processing to an original frame, predicted IoU within 0.02;</li>
 *   <li>a batch of many prompt sets (mixed point counts, boxes, masks) equals each set decoded alone, also
 *       when the batch is larger than the configured max prompt sets (chunked);</li>
 *   <li>vit_b's decoder widths (256, 8 heads, MLP 2048) with random weights on a 32 x 32 grid;</li>
 *   <li>decode on one thread while another encodes gives the results of running them one after the other;</li>
 *   <li>bad prompts are refused with the set named, and leave the decoder usable.</li>
 * </ul>
 * Skips with the reason where no GPU is usable (CI).
 */
@Tag("gpu")
class CudaDecoderParityGpuTest {
    static final Path FIXTURES = CudaParityGpuTest.FIXTURES;

    @BeforeEach
    void requireGpu() {
        GpuTests.assumeGpu();
    }

    /** The prompt kinds of the parity checks, in model input coordinates of an s x s input. */
    static Map<String, Prompt> prompts(int s, Tensor maskInput) {
        Map<String, Prompt> m = new LinkedHashMap<>();
        m.put("one point", new Prompt(new float[][] {{0.42f * s, 0.55f * s}}, new int[] {1}, null, null));
        m.put("points fg+bg", new Prompt(new float[][] {{0.3f * s, 0.3f * s}, {0.6f * s, 0.45f * s}, {0.8f * s, 0.2f * s}},
                new int[] {1, 0, 1}, null, null));
        m.put("box", new Prompt(null, null, new float[] {0.2f * s, 0.25f * s, 0.7f * s, 0.5f * s}, null));
        m.put("points + box", new Prompt(new float[][] {{0.45f * s, 0.4f * s}}, new int[] {0}, new float[] {0.1f * s,
                0.1f * s, 0.6f * s, 0.55f * s}, null));
        m.put("mask input", new Prompt(null, null, null, maskInput));
        m.put("mask + point", new Prompt(new float[][] {{0.42f * s, 0.55f * s}}, new int[] {1}, null, maskInput));
        return m;
    }

    @Test
    void fixtureModelsMatchTheCpuDecoder() throws IOException {
        for (String cfg : new String[] {"tiny256", "small1024"}) {
            StateDict weights = CheckpointLoader.load(FIXTURES.resolve(cfg).resolve("model.pth"));
            SamConfig config = SamConfigInference.infer(weights);
            Path caseDir = FIXTURES.resolve(cfg).resolve(cfg.equals("tiny256") ? "square-model-size" : "hd-shrink");
            float[] ref = Npy.readNpz(caseDir.resolve("expected.npz")).get("embedding").toFloats();
            int c = config.promptDim(), e = config.embeddingSize();
            Tensor embedding = new Tensor(ref, 1, c, e, e);
            try (CpuSamBackend cpu = CpuSamBackend.decoderOnly(weights, config, 4);
                 CudaSamBackend cuda = new CudaSamBackend(weights, config,
                         CudaSamOptions.builder(1).maxPromptSets(8).build())) {
                compareAll(cfg, cpu, cuda, embedding, config, 0.98, 0.02, 0.999);
            }
        }
    }

    @Test
    void vitBDecoderWidthsWithRandomWeightsMatchTheCpu() {
        SamConfig config = CudaParityGpuTest.vitBShaped();
        StateDict weights = RandomSamWeights.stateDict(config, 17);
        int c = config.promptDim(), e = config.embeddingSize();
        Tensor embedding = randomEmbedding(c, e, 23);
        try (CpuSamBackend cpu = CpuSamBackend.decoderOnly(weights, config, Runtime.getRuntime().availableProcessors());
             CudaSamBackend cuda = new CudaSamBackend(weights, config,
                     CudaSamOptions.builder(1).maxPromptSets(8).build())) {
            compareAll("vit_b-shaped random", cpu, cuda, embedding, config, 0.98, 0.02, 0.999);
        }
    }

    static void compareAll(String what, CpuSamBackend cpu, CudaSamBackend cuda, Tensor embedding, SamConfig config,
                           double minIou, double maxPredError, double minCos) {
        int s = config.imageSize();
        Tensor maskInput = cpu.decode(embedding, prompts(s, null).get("one point"), false).lowResLogits();
        ImageSize resized = new ImageSize(144 * s / 256, s), original = new ImageSize(180 * s / 256, 320 * s / 256);
        MaskPostprocessor post = new MaskPostprocessor(s);
        StringBuilder report = new StringBuilder(what + " [gpu decoder vs cpu decoder]:");
        double worstIou = 1, worstPred = 0, worstCos = 1;
        List<String> failures = new ArrayList<>();
        for (Map.Entry<String, Prompt> pe : prompts(s, maskInput).entrySet()) {
            for (boolean multimask : new boolean[] {true, false}) {
                DecoderOutput want = cpu.decode(embedding, pe.getValue(), multimask);
                DecoderOutput got = cuda.decode(embedding, pe.getValue(), multimask);
                assertEquals(want.count(), got.count(), "mask count");
                assertTrue(java.util.Arrays.equals(want.lowResLogits().shape(), got.lowResLogits().shape()), "shape");
                boolean[][] wm = post.masks(want.lowResLogits(), resized, original);
                boolean[][] gm = post.masks(got.lowResLogits(), resized, original);
                int plane = want.lowResLogits().size() / want.count();
                for (int m = 0; m < want.count(); m++) {
                    float[] w = java.util.Arrays.copyOfRange(want.lowResLogits().data(), m * plane, (m + 1) * plane);
                    float[] g = java.util.Arrays.copyOfRange(got.lowResLogits().data(), m * plane, (m + 1) * plane);
                    double cos = SamReferenceParityTest.cosine(w, g);
                    double iou = SamReferenceParityTest.maskIou(wm[m], 0, gm[m]);
                    double pred = Math.abs(want.iouPredictions()[m] - got.iouPredictions()[m]);
                    worstIou = Math.min(worstIou, iou);
                    worstPred = Math.max(worstPred, pred);
                    worstCos = Math.min(worstCos, cos);
                    String line = String.format(Locale.ROOT,
                            "%n  %-13s %s mask %d: logits cosine %.6f, max |diff| %.4f (max |ref| %.3f), mask IoU %.5f, "
                                    + "predicted IoU %.5f vs %.5f", pe.getKey(), multimask ? "multi " : "single", m, cos,
                            CudaParityGpuTest.maxAbsDiff(w, g), CudaParityGpuTest.maxAbs(w), iou,
                            got.iouPredictions()[m], want.iouPredictions()[m]);
                    report.append(line);
                    if (cos < minCos || iou < minIou || pred > maxPredError) {
                        failures.add(line.trim());
                    }
                }
            }
        }
        report.append(String.format(Locale.ROOT, "%n  worst: logits cosine %.6f, mask IoU %.5f, predicted-IoU error %.5f",
                worstCos, worstIou, worstPred));
        System.out.println(report);
        assertTrue(failures.isEmpty(), "outside the bounds (cosine >= " + minCos + ", IoU >= " + minIou
                + ", predicted IoU within " + maxPredError + "): " + failures + "\n" + report);
    }

    /** A mixed batch: point counts 1..4, with and without boxes and mask inputs, in an interleaved order. */
    static List<Prompt> mixedBatch(int s, Tensor maskInput, int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        List<Prompt> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int points = i % 5;   // 0: box only
            float[][] pts = points == 0 ? null : new float[points][];
            int[] labels = points == 0 ? null : new int[points];
            for (int k = 0; k < points; k++) {
                pts[k] = new float[] {(float) r.nextDouble(0, s), (float) r.nextDouble(0, s)};
                labels[k] = r.nextInt(2);
            }
            float[] box = null;
            if (points == 0 || i % 3 == 0) {
                float x0 = (float) r.nextDouble(0, s / 2.0), y0 = (float) r.nextDouble(0, s / 2.0);
                box = new float[] {x0, y0, x0 + (float) r.nextDouble(8, s / 2.0), y0 + (float) r.nextDouble(8, s / 2.0)};
            }
            out.add(new Prompt(pts, labels, box, i % 4 == 1 ? maskInput : null));
        }
        return out;
    }

    @Test
    void aBatchEqualsEachSetAloneAlsoWhenChunked() throws IOException {
        StateDict weights = CheckpointLoader.load(FIXTURES.resolve("tiny256").resolve("model.pth"));
        SamConfig config = SamConfigInference.infer(weights);
        int c = config.promptDim(), e = config.embeddingSize(), s = config.imageSize();
        Tensor embedding = randomEmbedding(c, e, 5);
        // max 4 sets per batch: 23 sets of 5 sparse-token counts run as several chunks per count
        try (CudaSamBackend cuda = new CudaSamBackend(weights, config,
                CudaSamOptions.builder(1).maxPromptSets(4).build())) {
            Tensor maskInput = cuda.decode(embedding, prompts(s, null).get("box"), false).lowResLogits();
            List<Prompt> batch = mixedBatch(s, maskInput, 23, 9);
            for (boolean multimask : new boolean[] {true, false}) {
                List<DecoderOutput> together = cuda.decodeBatch(embedding, batch, multimask);
                assertEquals(batch.size(), together.size());
                double worst = 0;
                for (int i = 0; i < batch.size(); i++) {
                    DecoderOutput alone = cuda.decode(embedding, batch.get(i), multimask);
                    DecoderOutput t = together.get(i);
                    assertEquals(alone.count(), t.count());
                    worst = Math.max(worst, CudaParityGpuTest.maxAbsDiff(alone.lowResLogits().data(), t.lowResLogits().data()));
                    worst = Math.max(worst, CudaParityGpuTest.maxAbsDiff(alone.iouPredictions(), t.iouPredictions()));
                }
                System.out.printf(Locale.ROOT, "batch of %d (max 4 per batch, multimask %b) vs each alone: max |diff| %.3g%n",
                        batch.size(), multimask, worst);
                // Rows of a batch never mix: the same kernels give the same numbers, up to nothing.
                assertTrue(worst <= 1e-5, "batched vs alone: max |diff| " + worst);

                // The captured graphs replay exactly what the kernels launched one by one compute.
                cuda.maskDecoder().useGraphs(false);
                List<DecoderOutput> direct = cuda.decodeBatch(embedding, batch, multimask);
                cuda.maskDecoder().useGraphs(true);
                double graphDiff = 0;
                for (int i = 0; i < batch.size(); i++) {
                    graphDiff = Math.max(graphDiff, CudaParityGpuTest.maxAbsDiff(direct.get(i).lowResLogits().data(),
                            together.get(i).lowResLogits().data()));
                }
                assertEquals(0.0, graphDiff, "graph replay vs direct launches");
            }
            // The per-step profile covers the steps and runs without graphs.
            Map<String, Double> prof = cuda.maskDecoder().profile(embedding, batch.subList(0, 4), true, 2);
            assertTrue(prof.containsKey("token to image: attention") && prof.containsKey("mask logits"), prof.toString());
            assertTrue(prof.values().stream().allMatch(v -> v >= 0) && prof.values().stream().mapToDouble(v -> v).sum() > 0,
                    prof.toString());
        }
    }

    @Test
    void decodeRunsWhileAnotherThreadEncodes() throws Exception {
        StateDict weights = CheckpointLoader.load(FIXTURES.resolve("small1024").resolve("model.pth"));
        SamConfig config = SamConfigInference.infer(weights);
        int c = config.promptDim(), e = config.embeddingSize(), s = config.imageSize();
        Tensor embedding = randomEmbedding(c, e, 7);
        Tensor images = CudaParityGpuTest.randomImages(1, s, 3);
        try (CudaSamBackend cuda = new CudaSamBackend(weights, config,
                CudaSamOptions.builder(1).maxPromptSets(16).build())) {
            List<Prompt> batch = mixedBatch(s, null, 12, 4);
            Tensor wantEmb = cuda.encode(images);
            List<DecoderOutput> want = cuda.decodeBatch(embedding, batch, true);
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                Future<Double> enc = pool.submit(() -> {
                    double worst = 0;
                    for (int i = 0; i < 6; i++) {
                        worst = Math.max(worst, CudaParityGpuTest.maxAbsDiff(wantEmb.data(), cuda.encode(images).data()));
                    }
                    return worst;
                });
                Future<Double> dec = pool.submit(() -> {
                    double worst = 0;
                    for (int i = 0; i < 12; i++) {
                        List<DecoderOutput> got = cuda.decodeBatch(embedding, batch, true);
                        for (int k = 0; k < got.size(); k++) {
                            worst = Math.max(worst, CudaParityGpuTest.maxAbsDiff(want.get(k).lowResLogits().data(),
                                    got.get(k).lowResLogits().data()));
                        }
                    }
                    return worst;
                });
                assertEquals(0.0, enc.get(), "encoder output while decoding concurrently");
                assertEquals(0.0, dec.get(), "decoder output while encoding concurrently");
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void badPromptsAreRefusedAndLeaveTheDecoderUsable() throws IOException {
        StateDict weights = CheckpointLoader.load(FIXTURES.resolve("tiny256").resolve("model.pth"));
        SamConfig config = SamConfigInference.infer(weights);
        int c = config.promptDim(), e = config.embeddingSize(), s = config.imageSize();
        Tensor embedding = randomEmbedding(c, e, 8);
        try (CudaSamBackend cuda = new CudaSamBackend(weights, config,
                CudaSamOptions.builder(1).maxPromptSets(4).build())) {
            Prompt ok = prompts(s, null).get("one point");
            DecoderOutput before = cuda.decode(embedding, ok, true);
            IllegalArgumentException wrongMask = assertThrows(IllegalArgumentException.class, () -> cuda.decodeBatch(
                    embedding, List.of(ok, new Prompt(null, null, null, Tensor.zeros(1, 32, 32))), true));
            assertTrue(wrongMask.getMessage().contains("prompt set 1"), wrongMask.getMessage());
            float[][] many = new float[CudaMaskDecoder.MAX_SPARSE + 1][];
            for (int i = 0; i < many.length; i++) {
                many[i] = new float[] {i, i};
            }
            IllegalArgumentException tooMany = assertThrows(IllegalArgumentException.class,
                    () -> cuda.decode(embedding, new Prompt(many, new int[many.length], null, null), true));
            assertTrue(tooMany.getMessage().contains("at most " + CudaMaskDecoder.MAX_SPARSE), tooMany.getMessage());
            assertThrows(IllegalArgumentException.class, () -> cuda.decode(Tensor.zeros(1, c, e + 1, e + 1), ok, true));
            DecoderOutput after = cuda.decode(embedding, ok, true);
            assertEquals(0.0, CudaParityGpuTest.maxAbsDiff(before.lowResLogits().data(), after.lowResLogits().data()));
        }
    }

    static Tensor randomEmbedding(int c, int e, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] v = new float[c * e * e];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) r.nextGaussian() * 0.5f;
        }
        return new Tensor(v, 1, c, e, e);
    }
}
