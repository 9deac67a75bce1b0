package io.samstream.gpu.cuda.sam3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.GpuTestSupport;
import io.samstream.gpu.sam2.Sam2Shapes;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Detections;
import io.samstream.gpu.sam3.Prompt;
import io.samstream.gpu.sam3.Sam3Checkpoint;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3ConfigInference;
import io.samstream.gpu.sam3.Sam3Decoder;
import io.samstream.gpu.sam3.Sam3Model;
import io.samstream.gpu.sam3.Sam3Shapes;
import io.samstream.gpu.sam3.VisionFeatures;
import io.samstream.gpu.tensor.Npy;
import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * SAM 3's DETR decoder on the GPU against the fp32 CPU reference on the same memory and prompt: the tiny fixture model
 * for each of the fixture's prompts, also against Meta's own queries, boxes and presence ({@code p<i>_queries.npy},
 * {@code p<i>_boxes.npy}, {@code p<i>_presence.npy}); and random weights at the release's shapes (6 layers at width
 * 256, 200 queries over 72x72 memory tokens, 35 prompt rows of which 26 padding). Issue #33's GPU parity: box IoU at
 * least 0.98 for every query; the queries' cosine near 1; the presence logit's sign and value. A wrong box bias, a
 * wrong in_proj block or the padding attended to moves boxes by far more.
 */
class CudaSam3DecoderGpuTest extends GpuTestBase {
    private static final double MIN_COSINE = 0.998, MAX_REL_L2 = 0.06, MIN_BOX_IOU = 0.98;
    private static final int THREADS = Runtime.getRuntime().availableProcessors();

    @Test
    void tinyFixtureDecoderMatchesTheCpuReferenceAndMeta() throws IOException {
        Path tiny = CudaSam3VitGpuTest.TINY;
        StateDict checkpoint = CheckpointLoader.load(tiny.resolve("sam3_tiny.pt"));
        Sam3Config config = Sam3ConfigInference.infer(checkpoint);
        int maxPrompt = CudaSam3.maxPromptTokens(config);
        long mark = gpu.pool.mark();
        try (Sam3Model cpu = new Sam3Model(checkpoint, config, THREADS)) {
            CudaSam3Decoder decoder = new CudaSam3Decoder(Sam3Checkpoint.detector(checkpoint), config.detector(),
                    config.vision().grid(), maxPrompt, gpu.kernels, gpu.stream, gpu.pool, gpu.staging);
            VisionFeatures image = cpu.encodeImage(Npy.read(tiny.resolve("model_input.npy")).toFloats());
            for (int i = 0; Files.isRegularFile(tiny.resolve("p" + i + "_tokens.npy")); i++) {
                int[] ids = GpuTestSupport.ints(Npy.read(tiny.resolve("p" + i + "_tokens.npy")).toLongs());
                Detections det = cpu.detect(image, cpu.encodeText(ids), TinyPrompts.boxes(tiny, i));
                Sam3Decoder.Output out = decoder.forward(det.memory(), image.pos(), image.grid(), det.prompt());
                String label = "tiny prompt " + i;
                check(label + " against the CPU", det.queries(), det.boxes(), det.presence(), out);
                check(label + " against Meta", Npy.read(tiny.resolve("p" + i + "_queries.npy")).toFloats(),
                        Npy.read(tiny.resolve("p" + i + "_boxes.npy")).toFloats(),
                        Npy.read(tiny.resolve("p" + i + "_presence.npy")).toFloats()[0], out);
            }
        } finally {
            gpu.pool.release(mark);
        }
    }

    @Test
    void releaseShapesMatchTheCpuReference() {
        Sam3Config release = CudaSam3Test.RELEASE;
        Map<String, int[]> shapes = Sam3Shapes.detectorPart(release, Sam3Decoder.PREFIX);
        StateDict sd = smallBoxSteps(Sam2Shapes.random(shapes, 71));
        Sam3Config.Detector c = release.detector();
        int d = c.dModel(), g = release.vision().grid(), maxPrompt = CudaSam3.maxPromptTokens(release);
        Random rnd = new Random(72);
        float[] memory = new float[g * g * d], pos = new float[g * g * d];
        for (int i = 0; i < memory.length; i++) {
            memory[i] = (float) rnd.nextGaussian();
            pos[i] = (float) Math.sin(i * 0.37);
        }
        Prompt prompt = ReleaseInputs.paddedPrompt(rnd, d);
        Sam3Decoder.Output ref;
        try (CpuThreadPool threads = new CpuThreadPool(THREADS);
             Sam3Decoder cpu = Sam3Decoder.cpu().open(sd, c, threads)) {
            ref = cpu.forward(FeatureMap.of(memory), pos, g, prompt);
        }
        long mark = gpu.pool.mark();
        try {
            CudaSam3Decoder decoder = new CudaSam3Decoder(sd, c, g, maxPrompt, gpu.kernels, gpu.stream, gpu.pool,
                    gpu.staging);
            long taken = gpu.pool.mark() - mark, sized = CudaSam3Decoder.poolBytes(c, g, maxPrompt);
            assertTrue(taken <= sized, "the decoder took " + taken + " bytes, poolBytes says " + sized);
            check("release shapes", ref.queries(), ref.boxes(), ref.presence(), decoder.forward(FeatureMap.of(memory), pos, g,
                    prompt));
        } finally {
            gpu.pool.release(mark);
        }
    }

    /**
     * The weights with the box head's last layer scaled by 0.1, as DETR-style decoders start it near zero, so that
     * each layer refines a box by a step, as a trained model's does. With that layer at full random size each layer
     * moves the boxes by several widths, and the six steps through the box bias amplify any difference: on the CPU,
     * rounding only the inputs and weights to bf16 put the worst query's box at IoU 0.67 (mean 0.95); with the
     * scaled layer at 0.9925 (mean 0.997). The queries' check is unaffected by it.
     */
    private static StateDict smallBoxSteps(StateDict sd) {
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        for (String key : sd.keys()) {
            Tensor t = sd.get(key);
            if (key.startsWith(Sam3Decoder.PREFIX + "bbox_embed.layers.2.")) {
                float[] v = t.data().clone();
                for (int i = 0; i < v.length; i++) {
                    v[i] *= 0.1f;
                }
                t = new Tensor(v, t.shape());
            }
            tensors.put(key, t);
        }
        return new StateDict(Path.of("release-decoder-small-box-steps.pt"), tensors);
    }

    private static void check(String what, float[] queries, float[] boxes, float presence, Sam3Decoder.Output out) {
        GpuTestSupport.assertCosineAndRelL2(what + " queries", queries, out.queries(), MIN_COSINE, MAX_REL_L2);
        for (int q = 0; q < boxes.length / 4; q++) {
            double iou = boxIou(boxes, out.boxes(), q);
            assertTrue(iou >= MIN_BOX_IOU, what + " box of query " + q + ": IoU " + iou);
        }
        assertEquals(Math.signum(presence), Math.signum(out.presence()), what + " presence sign");
        assertEquals(presence, out.presence(), 0.05 * Math.max(1, Math.abs(presence)), what + " presence logit");
    }

    /** IoU of box q of two [n, 4] (cx, cy, w, h) arrays. */
    private static double boxIou(float[] a, float[] b, int q) {
        double ax0 = a[4 * q] - a[4 * q + 2] / 2, ax1 = a[4 * q] + a[4 * q + 2] / 2;
        double ay0 = a[4 * q + 1] - a[4 * q + 3] / 2, ay1 = a[4 * q + 1] + a[4 * q + 3] / 2;
        double bx0 = b[4 * q] - b[4 * q + 2] / 2, bx1 = b[4 * q] + b[4 * q + 2] / 2;
        double by0 = b[4 * q + 1] - b[4 * q + 3] / 2, by1 = b[4 * q + 1] + b[4 * q + 3] / 2;
        double iw = Math.max(0, Math.min(ax1, bx1) - Math.max(ax0, bx0));
        double ih = Math.max(0, Math.min(ay1, by1) - Math.max(ay0, by0));
        double inter = iw * ih, union = (ax1 - ax0) * (ay1 - ay0) + (bx1 - bx0) * (by1 - by0) - inter;
        return union <= 0 ? 1.0 : inter / union;
    }
}
