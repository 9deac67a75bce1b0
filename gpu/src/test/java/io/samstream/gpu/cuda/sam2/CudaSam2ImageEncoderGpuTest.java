package io.samstream.gpu.cuda.sam2;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.ModelCheckpoints;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.sam2.FrameFeatures;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2ImageEncoder;
import io.samstream.gpu.sam2.Sam2Shapes;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * SAM 2's image encoder on the GPU (Hiera, FPN neck, conv_s0 / conv_s1 in bf16) against the fp32 CPU reference on
 * the same image: the tiny fixture model (windows 8/4/6/2, head dim 8), and random weights at hiera_tiny's shapes
 * (input 1024, windows 8/4/14/7 with the 64 -> 70 padding, global blocks, head dim 96) and hiera_base_plus's (head
 * dim 56 on the 64-wide kernel, 24 blocks). bf16 through the trunk keeps the relative L2 error near 1e-2; a wrong
 * window, pooling or neck mapping puts it near 1.
 */
class CudaSam2ImageEncoderGpuTest extends GpuTestBase {
    static final Path FIXTURES = Path.of(System.getProperty("samstream.fixtures", "src/test/resources/fixtures"));
    private static final double MAX_REL_L2 = 0.03;

    @Test
    void tinyFixtureModelMatchesTheCpuReference() {
        StateDict sd = ModelCheckpoints.load(FIXTURES.resolve("sam2/tiny/checkpoint.pt"));
        compare("tiny fixture", sd, ModelCheckpoints.sam2Config(sd), 11);
    }

    @Test
    void hieraTinyShapesMatchTheCpuReference() {
        Sam2Config config = Sam2Shapes.release("hiera_tiny");
        compare("hiera_tiny", Sam2Shapes.random(Sam2Shapes.imageEncoder(config), 21), config, 12);
    }

    @Test
    void hieraBasePlusShapesMatchTheCpuReference() {
        Sam2Config config = Sam2Shapes.release("hiera_base_plus");
        compare("hiera_base_plus", Sam2Shapes.random(Sam2Shapes.imageEncoder(config), 31), config, 13);
    }

    private static void compare(String what, StateDict sd, Sam2Config config, long seed) {
        int s = config.imageSize();
        float[] image = new float[3 * s * s];
        Random rnd = new Random(seed);
        // a smooth pattern plus noise: structure for the windows to see, in the range of a normalized image
        for (int c = 0; c < 3; c++) {
            for (int y = 0; y < s; y++) {
                for (int x = 0; x < s; x++) {
                    image[(c * s + y) * s + x] = (float) (Math.sin(0.05 * x + c) * Math.cos(0.031 * y) * 1.5
                            + rnd.nextGaussian() * 0.3);
                }
            }
        }
        FrameFeatures ref;
        try (CpuThreadPool threads = new CpuThreadPool(Runtime.getRuntime().availableProcessors())) {
            ref = new Sam2ImageEncoder(sd, config).forward(threads, image);
        }
        long mark = gpu.pool.mark();
        try {
            CudaSam2ImageEncoder encoder = new CudaSam2ImageEncoder(sd, config, 1, gpu.kernels, gpu.stream, gpu.pool,
                    gpu.staging);
            FrameFeatures out = encoder.encode(image);
            assertEquals(ref.side(), out.side());
            check(what + " top (stride 16)", ref.top(), out.top());
            check(what + " s0 (stride 4)", ref.s0(), out.s0());
            check(what + " s1 (stride 8)", ref.s1(), out.s1());
        } finally {
            gpu.pool.release(mark);
        }
    }

    private static void check(String what, float[] ref, float[] out) {
        assertEquals(ref.length, out.length, what + " size");
        double num = 0, den = 0;
        for (int i = 0; i < ref.length; i++) {
            assertTrue(Float.isFinite(out[i]), what + ": value " + i + " is " + out[i]);
            double d = (double) out[i] - ref[i];
            num += d * d;
            den += (double) ref[i] * ref[i];
        }
        double rel = Math.sqrt(num / Math.max(den, 1e-30));
        System.out.printf("%s: relative L2 error %.3e over %d values%n", what, rel, ref.length);
        assertTrue(den > 0, what + ": the reference is all zeros");
        assertTrue(rel < MAX_REL_L2, what + ": relative L2 error " + rel);
    }
}
