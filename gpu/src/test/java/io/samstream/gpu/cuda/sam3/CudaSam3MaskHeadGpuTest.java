package io.samstream.gpu.cuda.sam3;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.GpuTestSupport;
import io.samstream.gpu.sam2.Resampling;
import io.samstream.gpu.sam2.Sam2Shapes;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Detections;
import io.samstream.gpu.sam3.Prompt;
import io.samstream.gpu.sam3.Sam3Backend;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3Decoder;
import io.samstream.gpu.sam3.Sam3ConfigInference;
import io.samstream.gpu.sam3.Sam3Fusion;
import io.samstream.gpu.sam3.Sam3MaskHead;
import io.samstream.gpu.sam3.Sam3Model;
import io.samstream.gpu.sam3.Sam3Neck;
import io.samstream.gpu.sam3.Sam3Shapes;
import io.samstream.gpu.sam3.Sam3Trunk;
import io.samstream.gpu.sam3.VisionFeatures;
import io.samstream.gpu.tensor.Npy;
import io.samstream.testkit.CocoMasks;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * SAM 3's mask head on the GPU (bf16) against the fp32 CPU reference on the same detections: the tiny fixture model
 * with only its mask head on the GPU (its width 32 makes GroupNorm groups of 4 channels), for each of the fixture's
 * prompts and Meta's chosen queries, also against Meta's own mask logits ({@code p<i>_masks.npy}); and random weights
 * at the release's shapes (72x72 memory, levels of 144² and 288² at 256, 35 prompt rows of which 26 padding, 5
 * queries). Mask IoU at least 0.98 (issue #33's GPU parity) and logits near the reference; an upsampling onto the
 * wrong level, a wrong GroupNorm group or the padding attended to puts the IoU far lower.
 */
class CudaSam3MaskHeadGpuTest extends GpuTestBase {
    private static final double MIN_COSINE = 0.999, MAX_REL_L2 = 0.03, MIN_IOU = 0.98;
    private static final int THREADS = Runtime.getRuntime().availableProcessors();

    @Test
    void tinyFixtureMasksMatchTheCpuReferenceAndMeta() throws IOException {
        Path tiny = CudaSam3VitGpuTest.TINY;
        StateDict checkpoint = CheckpointLoader.load(tiny.resolve("sam3_tiny.pt"));
        Sam3Config config = Sam3ConfigInference.infer(checkpoint);
        float[] input = Npy.read(tiny.resolve("model_input.npy")).toFloats();
        long mark = gpu.pool.mark();
        try {
            DeviceBuffer rows = gpu.pool.allocateBf16(CudaSam3MaskHead.rowsValues(config), "im2col rows");
            Sam3Backend.Factory headOnGpu = Sam3Backend.of(Sam3Trunk.cpu(), Sam3Neck.cpu(), Sam3Fusion.cpu(),
                    Sam3Decoder.cpu(), (sd, detector, pool) -> new CudaSam3MaskHead(sd, config,
                            CudaSam3.maxPromptTokens(config), detector.queries(), gpu.kernels, gpu.stream, gpu.pool,
                            gpu.staging, rows));
            try (Sam3Model cpu = new Sam3Model(checkpoint, config, THREADS);
                 Sam3Model onGpu = new Sam3Model(checkpoint, config, THREADS, headOnGpu)) {
                VisionFeatures image = cpu.encodeImage(input);
                int side = 4 * image.grid();
                int[] hw = TinyPrompts.imageHw(tiny);
                for (int i = 0; Files.isRegularFile(tiny.resolve("p" + i + "_top.npy")); i++) {
                    int[] ids = GpuTestSupport.ints(Npy.read(tiny.resolve("p" + i + "_tokens.npy")).toLongs());
                    Detections det = cpu.detect(image, cpu.encodeText(ids), TinyPrompts.boxes(tiny, i));
                    int[] top = GpuTestSupport.ints(Npy.read(tiny.resolve("p" + i + "_top.npy")).toLongs());
                    float[] ref = cpu.masks(det, top), out = onGpu.masks(det, top);
                    float[] meta = Npy.read(tiny.resolve("p" + i + "_masks.npy")).toFloats();
                    String label = "tiny prompt " + i;
                    GpuTestSupport.assertCosineAndRelL2(label + " logits", ref, out, MIN_COSINE, MAX_REL_L2);
                    for (int k = 0; k < top.length; k++) {
                        checkImageIou(label + " query " + top[k] + " against the CPU", ref, out, k, side, hw);
                        checkImageIou(label + " query " + top[k] + " against Meta", meta, out, k, side, hw);
                    }
                }
            }
        } finally {
            gpu.pool.release(mark);
        }
    }

    @Test
    void releaseShapesMatchTheCpuReference() {
        Sam3Config release = CudaSam3Test.RELEASE;
        Map<String, int[]> shapes = Sam3Shapes.detectorPart(release, Sam3MaskHead.PREFIX);
        StateDict sd = Sam2Shapes.random(shapes, 61);
        int d = release.detector().dModel(), g = release.vision().grid(), n = 5;
        Random rnd = new Random(62);
        float[] memory = gaussian(rnd, g * g * d, 1);
        float[][] fpn = {gaussian(rnd, 16 * g * g * d, 1), gaussian(rnd, 4 * g * g * d, 1), gaussian(rnd, g * g * d, 1)};
        VisionFeatures image = new VisionFeatures(g, new float[0], fpn, new float[g * g * d]);
        Prompt prompt = ReleaseInputs.paddedPrompt(rnd, d);
        float[] embeddings = gaussian(rnd, n * d, 0.1);
        float[] ref;
        try (CpuThreadPool threads = new CpuThreadPool(THREADS);
             Sam3MaskHead cpu = Sam3MaskHead.cpu().open(sd, release.detector(), threads)) {
            ref = cpu.masks(FeatureMap.of(memory), image, prompt, embeddings, n);
        }
        long mark = gpu.pool.mark();
        try {
            int maxPrompt = CudaSam3.maxPromptTokens(release), queries = release.detector().queries();
            DeviceBuffer im2col = gpu.pool.allocateBf16(CudaSam3MaskHead.rowsValues(release), "im2col rows");
            long before = gpu.pool.mark();
            CudaSam3MaskHead head = new CudaSam3MaskHead(sd, release, maxPrompt, queries, gpu.kernels, gpu.stream,
                    gpu.pool, gpu.staging, im2col);
            long taken = gpu.pool.mark() - before, sized = CudaSam3MaskHead.poolBytes(release, maxPrompt, queries);
            assertTrue(taken <= sized, "the head took " + taken + " bytes, poolBytes says " + sized);
            float[] out = head.masks(FeatureMap.of(memory), image, prompt, embeddings, n);
            GpuTestSupport.assertCosineAndRelL2("release shapes logits", ref, out, MIN_COSINE, MAX_REL_L2);
            for (int k = 0; k < n; k++) {
                checkIou("release shapes query " + k, ref, out, k, 16 * g * g);
            }
        } finally {
            gpu.pool.release(mark);
        }
    }

    /**
     * Mask k's IoU on the masks users get: both logit maps (side x side) upsampled to the image's size as {@code
     * Sam3Image} does, then thresholded. At the tiny fixture's 32x32 a mask of 85 pixels loses 1.2 % of IoU for each
     * pixel whose logit sits within bf16's rounding of zero (the fixture has logits of 0.003); upsampled, such a pixel
     * moves the mask's edge by a fraction of a pixel, which is the difference a user sees. The low-resolution IoU is
     * printed beside it, not bounded.
     */
    static void checkImageIou(String what, float[] ref, float[] out, int k, int side, int[] hw) {
        checkImageIou(what, ref, out, k, side, hw, 0, MIN_IOU);
    }

    /** As above with the least IoU at the head's side ({@code minLow}) and at the image's ({@code minImage}). */
    static void checkImageIou(String what, float[] ref, float[] out, int k, int side, int[] hw, double minLow,
            double minImage) {
        int pixels = side * side, h = hw[0], w = hw[1];
        float[] a = new float[pixels], b = new float[pixels];
        System.arraycopy(ref, k * pixels, a, 0, pixels);
        System.arraycopy(out, k * pixels, b, 0, pixels);
        double low = CocoMasks.iou(positive(a), positive(b));
        double iou = CocoMasks.iou(positive(Resampling.bilinear(a, side, side, h, w)),
                positive(Resampling.bilinear(b, side, side, h, w)));
        System.out.printf("%s: mask IoU %.4f at %dx%d (%.4f at %dx%d)%n", what, iou, w, h, low, side, side);
        assertTrue(iou >= minImage && low >= minLow, what + ": mask IoU " + iou + " at " + w + "x" + h + " (" + low
                + " at " + side + "x" + side + ")");
    }

    private static boolean[] positive(float[] logits) {
        boolean[] m = new boolean[logits.length];
        for (int i = 0; i < m.length; i++) {
            m[i] = logits[i] > 0;
        }
        return m;
    }

    private static void checkIou(String what, float[] ref, float[] out, int k, int pixels) {
        boolean[] a = new boolean[pixels], b = new boolean[pixels];
        for (int p = 0; p < pixels; p++) {
            a[p] = ref[k * pixels + p] > 0;
            b[p] = out[k * pixels + p] > 0;
        }
        double iou = CocoMasks.iou(a, b);
        assertTrue(iou >= MIN_IOU, what + ": mask IoU " + iou);
    }

    private static float[] gaussian(Random rnd, int n, double std) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) (rnd.nextGaussian() * std);
        }
        return v;
    }
}
