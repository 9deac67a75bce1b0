package io.samstream.gpu.cuda.sam3;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.GpuTestSupport;
import io.samstream.gpu.cuda.StagedCopy;
import io.samstream.gpu.sam2.Sam2Shapes;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Detections;
import io.samstream.gpu.sam3.Prompt;
import io.samstream.gpu.sam3.Sam3Checkpoint;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3ConfigInference;
import io.samstream.gpu.sam3.Sam3Fusion;
import io.samstream.gpu.sam3.Sam3Model;
import io.samstream.gpu.sam3.Sam3Shapes;
import io.samstream.gpu.sam3.TextFeatures;
import io.samstream.gpu.sam3.VisionFeatures;
import io.samstream.gpu.tensor.Npy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * SAM 3's fusion encoder on the GPU (bf16) against the fp32 CPU reference on the same inputs: the tiny fixture model
 * (sam3_tiny.pt: width 32, 4 heads of 8, 2 layers, feed-forward 64, 8x8 tokens) on the fixture's image and each of
 * its prompts (the phrase's padded rows, and one prompt with an exemplar box), also against Meta's own memory
 * ({@code p<i>_memory.npy}); random weights at the release's shapes (width 256, 8 heads of 32, 6 layers, feed-forward
 * 2048, 72x72 tokens, 35 prompt tokens of which 26 are padding holding large values); and the whole tiny model on
 * {@link CudaSam3} (all its parts on one context) against the CPU model. bf16 through the residual
 * stream keeps the relative L2 error near 1e-2; attending to padding, a wrong in_proj split or a missing position puts
 * it near 1 and the cosine far below 0.999.
 */
class CudaSam3FusionEncoderGpuTest extends GpuTestBase {
    private static final double MIN_COSINE = 0.999, MAX_REL_L2 = 0.03;
    /** The whole model: the trunk's and the fusion encoder's bf16 errors add up, through the decoder too. */
    private static final double MODEL_MIN_COSINE = 0.998, MODEL_MAX_REL_L2 = 0.06;
    private static final int THREADS = Runtime.getRuntime().availableProcessors();

    @Test
    void tinyFixtureModelMatchesTheCpuReferenceAndMeta() throws IOException {
        Path tiny = CudaSam3VitGpuTest.TINY;
        StateDict checkpoint = CheckpointLoader.load(tiny.resolve("sam3_tiny.pt"));
        Sam3Config config = Sam3ConfigInference.infer(checkpoint);
        JsonNode prompts = TinyPrompts.all(tiny);
        try (Sam3Model model = new Sam3Model(checkpoint, config, THREADS)) {
            VisionFeatures image = model.encodeImage(Npy.read(tiny.resolve("model_input.npy")).toFloats());
            int tokens = image.grid() * image.grid();
            int maxPrompt = CudaSam3.maxPromptTokens(config);
            long mark = gpu.pool.mark();
            try {
                CudaSam3FusionEncoder encoder = new CudaSam3FusionEncoder(Sam3Checkpoint.detector(checkpoint),
                        config.detector(), tokens, maxPrompt, gpu.kernels, gpu.stream, gpu.pool, gpu.staging);
                checkPoolBytes(config.detector(), tokens, maxPrompt, mark);
                for (int i = 0; i < prompts.size(); i++) {
                    JsonNode p = prompts.get(i);
                    String label = "tiny prompt " + i + " '" + p.get("text").asText() + "'";
                    TextFeatures text = model.encodeText(GpuTestSupport.ints(Npy.read(tiny.resolve("p" + i
                            + "_tokens.npy")).toLongs()));
                    Detections det = model.detect(image, text, TinyPrompts.boxes(p));
                    assertTrue(det.prompt().validTokens() < det.prompt().length(), label + ": padding to skip");
                    float[] out = encoder.forward(image.tokens(), image.pos(), tokens, det.prompt()).values();
                    check(label + " against the CPU", det.memory().values(), out);
                    Path meta = tiny.resolve("p" + i + "_memory.npy");
                    if (Files.isRegularFile(meta)) {
                        check(label + " against Meta's memory", Npy.read(meta).toFloats(), out);
                    }
                }
            } finally {
                gpu.pool.release(mark);
            }
        }
    }

    @Test
    void releaseShapesMatchTheCpuReference() {
        Sam3Config.Detector c = Sam3ConfigInference.RELEASE_DETECTOR;
        // random weights at Sam2Shapes.random's scales: Linears N(0, 1/fan-in), LayerNorm weights near 1
        StateDict sd = Sam2Shapes.random(Sam3Shapes.fusionShapes(c), 51);
        int d = c.dModel(), g = Sam3ConfigInference.RELEASE_VIT.grid(), tokens = g * g;
        int maxPrompt = 32 + CudaSam3.MAX_EXEMPLAR_BOXES + 1;
        Random rnd = new Random(52);
        float[] image = new float[tokens * d], pos = new float[tokens * d];
        for (int t = 0; t < tokens; t++) {
            for (int ch = 0; ch < d; ch++) {
                image[t * d + ch] = (float) rnd.nextGaussian();
                // a sine position's range and smoothness: channel pairs of x and y at falling frequencies
                double coord = ch < d / 2 ? t % g : t / g;
                double f = coord / g * 2 * Math.PI * Math.pow(100, -(ch % (d / 2)) / (double) (d / 2));
                pos[t * d + ch] = (float) (ch % 2 == 0 ? Math.sin(f) : Math.cos(f));
            }
        }
        Prompt prompt = ReleaseInputs.paddedPrompt(rnd, d);
        float[] ref;
        try (CpuThreadPool threads = new CpuThreadPool(THREADS);
             Sam3Fusion cpu = Sam3Fusion.cpu().open(sd, c, threads)) {
            ref = cpu.forward(FeatureMap.of(image), pos, tokens, prompt).values();
        }
        long mark = gpu.pool.mark();
        try {
            CudaSam3FusionEncoder encoder = new CudaSam3FusionEncoder(sd, c, tokens, maxPrompt, gpu.kernels,
                    gpu.stream, gpu.pool, gpu.staging);
            checkPoolBytes(c, tokens, maxPrompt, mark);
            float[] out = encoder.forward(FeatureMap.of(image), pos, tokens, prompt).values();
            check("release shapes", ref, out);
            // a pass again on the inputs on the device: the first layer reads them, not the memory left in x
            encoder.forward(prompt.validTokens());
            check("release shapes, second pass", ref, StagedCopy.downloadBf16(gpu.stream, gpu.staging,
                    encoder.output(), (long) tokens * d));
        } finally {
            gpu.pool.release(mark);
        }
    }

    @Test
    void theTinyModelOnCudaSam3DetectsAsOnTheCpu() throws IOException {
        Path tiny = CudaSam3VitGpuTest.TINY;
        StateDict checkpoint = CheckpointLoader.load(tiny.resolve("sam3_tiny.pt"));
        Sam3Config config = Sam3ConfigInference.infer(checkpoint);
        float[] input = Npy.read(tiny.resolve("model_input.npy")).toFloats();
        int[] ids = GpuTestSupport.ints(Npy.read(tiny.resolve("p0_tokens.npy")).toLongs());
        Detections ref;
        try (Sam3Model cpu = new Sam3Model(checkpoint, config, THREADS)) {
            ref = cpu.detect(cpu.encodeImage(input), cpu.encodeText(ids), List.of());
        }
        try (Sam3Model onGpu = new Sam3Model(checkpoint, config, THREADS, CudaSam3.factory(0))) {
            assertTrue(onGpu.describe().startsWith("ViT trunk, necks, fusion encoder, decoder and mask head on "),
                    onGpu.describe());
            Detections det = onGpu.detect(onGpu.encodeImage(input), onGpu.encodeText(ids), List.of());
            check("tiny model on CudaSam3: memory", ref.memory().values(), det.memory().values(), MODEL_MIN_COSINE, MODEL_MAX_REL_L2);
            check("tiny model on CudaSam3: decoder queries", ref.queries(), det.queries(), MODEL_MIN_COSINE,
                    MODEL_MAX_REL_L2);
        }
    }

    /** What the encoder took from the pool (all at construction) is within {@link CudaSam3FusionEncoder#poolBytes}. */
    private static void checkPoolBytes(Sam3Config.Detector c, int tokens, int maxPrompt, long mark) {
        long taken = gpu.pool.mark() - mark, sized = CudaSam3FusionEncoder.poolBytes(c, tokens, maxPrompt);
        assertTrue(taken <= sized, "the encoder took " + taken + " bytes, poolBytes says " + sized);
    }

    private static void check(String what, float[] ref, float[] out) {
        check(what, ref, out, MIN_COSINE, MAX_REL_L2);
    }

    private static void check(String what, float[] ref, float[] out, double minCosine, double maxRelL2) {
        GpuTestSupport.assertCosineAndRelL2(what, ref, out, minCosine, maxRelL2);
    }
}
