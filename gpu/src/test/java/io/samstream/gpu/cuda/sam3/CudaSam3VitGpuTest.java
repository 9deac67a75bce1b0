package io.samstream.gpu.cuda.sam3;


import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.GpuTestSupport;
import io.samstream.gpu.sam2.Sam2Shapes;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Sam3Checkpoint;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3ConfigInference;
import io.samstream.gpu.sam3.Sam3Shapes;
import io.samstream.gpu.sam3.Sam3Trunk;
import io.samstream.gpu.tensor.Npy;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * SAM 3's ViT trunk on the GPU (bf16) against the fp32 CPU reference on the same image: the tiny fixture model
 * (sam3_tiny.pt: width 48, 2 heads of 24, windows of 4 on an 8x8 map, global blocks 1 and 3, MLP 222 zero-padded to
 * 224), also against Meta's own trunk output ({@code trunk.npy}); and random weights at the release's shapes (input
 * 1008, patch 14 → 72x72, width 1024, 16 heads of 64, MLP 4736, windows of 24) over the first 8 blocks, so block 7
 * is global as in the release. bf16 through the residual stream keeps the relative L2 error near 1e-2; a wrong
 * window, RoPE table or position embedding mapping puts it near 1 and the cosine far below 0.999.
 */
class CudaSam3VitGpuTest extends GpuTestBase {
    static final Path TINY = Path.of(System.getProperty("samstream.fixtures", "src/test/resources/fixtures"))
            .resolve("sam3/tiny");
    private static final double MIN_COSINE = 0.999, MAX_REL_L2 = 0.03;

    @Test
    void tinyFixtureModelMatchesTheCpuReferenceAndMeta() throws IOException {
        StateDict checkpoint = CheckpointLoader.load(TINY.resolve("sam3_tiny.pt"));
        Sam3Config.Vision vision = Sam3ConfigInference.infer(checkpoint).vision();
        float[] image = Npy.read(TINY.resolve("model_input.npy")).toFloats();
        float[] out = compare("tiny fixture", Sam3Checkpoint.detector(checkpoint), vision, image);
        int g = vision.grid();
        float[] meta = channelsLast(Npy.read(TINY.resolve("trunk.npy")).toFloats(), vision.embedDim(), g * g);
        check("tiny fixture against Meta's trunk.npy", meta, out);
    }

    @Test
    void releaseShapesMatchTheCpuReference() {
        // the release ViT cut to 8 blocks: 7 windowed, then the first global one (7, as in 7, 15, 23, 31)
        Sam3Config.Vision r = Sam3ConfigInference.RELEASE_VIT;
        Sam3Config.Vision vision = new Sam3Config.Vision(r.imageSize(), r.patchSize(), r.embedDim(), 8, r.heads(),
                r.mlpHidden(), r.windowSize(), new int[] {r.globalBlocks()[0]}, r.pretrainGrid(), r.levels());
        // random weights at Sam2Shapes.random's scales: Linears N(0, 1/fan-in), LayerNorm weights near 1
        StateDict sd = Sam2Shapes.random(Sam3Shapes.trunkShapes(vision), 41);
        compare("release shapes, 8 blocks", sd, vision, image(vision.imageSize(), 42));
    }

    /** Runs both trunks on {@code image}, checks them against each other, returns the GPU's map. */
    private static float[] compare(String what, StateDict sd, Sam3Config.Vision vision, float[] image) {
        float[] ref;
        try (CpuThreadPool threads = new CpuThreadPool(Runtime.getRuntime().availableProcessors());
             Sam3Trunk cpu = Sam3Trunk.cpu().open(sd, vision, threads)) {
            ref = cpu.forward(image).values();
        }
        long mark = gpu.pool.mark();
        try {
            CudaSam3Vit vit = new CudaSam3Vit(sd, vision, 1, gpu.kernels, gpu.stream, gpu.pool, gpu.staging);
            float[] out = vit.forward(image).values();
            check(what, ref, out);
            return out;
        } finally {
            gpu.pool.release(mark);
        }
    }

    private static void check(String what, float[] ref, float[] out) {
        GpuTestSupport.assertCosineAndRelL2(what, ref, out, MIN_COSINE, MAX_REL_L2);
    }

    /** A smooth pattern plus noise in the range of a normalized image, planar [3, s, s]. */
    static float[] image(int s, long seed) {
        Random rnd = new Random(seed);
        float[] image = new float[3 * s * s];
        for (int c = 0; c < 3; c++) {
            for (int y = 0; y < s; y++) {
                for (int x = 0; x < s; x++) {
                    image[(c * s + y) * s + x] = (float) (Math.sin(0.05 * x + c) * Math.cos(0.031 * y) * 1.5
                            + rnd.nextGaussian() * 0.3);
                }
            }
        }
        return image;
    }

    /** [c, n] to [n, c] (Meta's channels-first fixtures to the channels-last maps). */
    static float[] channelsLast(float[] chw, int c, int n) {
        float[] out = new float[chw.length];
        for (int ch = 0; ch < c; ch++) {
            for (int i = 0; i < n; i++) {
                out[i * c + ch] = chw[ch * n + i];
            }
        }
        return out;
    }
}
