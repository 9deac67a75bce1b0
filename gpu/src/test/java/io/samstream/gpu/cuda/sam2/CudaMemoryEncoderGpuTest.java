package io.samstream.gpu.cuda.sam2;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.ModelCheckpoints;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cuda.Bf16;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.sam2.MemoryEncoder;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Shapes;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * SAM 2's memory encoder on the GPU against the fp32 CPU reference on the same inputs (features rounded to bf16):
 * three objects in one pass, one from a prompt (binarized mask), one judged absent (the no-object embedding added),
 * on the tiny fixture model and on random weights at the releases' shapes (1024 input, 64 x 64 memories). A wrong
 * convolution, LayerNorm or flag puts the relative L2 error near 1 for that object.
 */
class CudaMemoryEncoderGpuTest extends GpuTestBase {
    private static final double MAX_REL_L2 = 0.03;

    @Test
    void tinyFixtureModelMatchesTheCpuReference() {
        StateDict sd = ModelCheckpoints.load(CudaSam2ImageEncoderGpuTest.FIXTURES.resolve("sam2/tiny/checkpoint.pt"));
        compare("tiny fixture", sd, ModelCheckpoints.sam2Config(sd), 61);
    }

    @Test
    void releaseShapesMatchTheCpuReference() {
        Sam2Config config = Sam2Shapes.release("hiera_tiny");
        compare("hiera_tiny shapes", Sam2Shapes.random(Sam2Shapes.memoryEncoder(config), 71), config, 72);
    }

    private static void compare(String what, StateDict sd, Sam2Config config, long seed) {
        int batch = 3;
        boolean[] fromPrompt = {false, true, false};
        boolean[] absent = {false, false, true};
        int f = config.featureSize(), c = config.hidden(), md = config.memDim(), l = config.lowResSize();
        Random rnd = new Random(seed);
        float[] pix = new float[batch * f * f * c];
        for (int i = 0; i < pix.length; i++) {
            pix[i] = Bf16.round((float) rnd.nextGaussian());
        }
        // blob-shaped logits: a disc per object, soft at its edge
        float[] logits = new float[batch * l * l];
        for (int b = 0; b < batch; b++) {
            double cx = l * (0.3 + 0.2 * b), cy = l * (0.6 - 0.1 * b), r = l * 0.2;
            for (int y = 0; y < l; y++) {
                for (int x = 0; x < l; x++) {
                    logits[(b * l + y) * l + x] = (float) ((r - Math.hypot(x - cx, y - cy)) * 0.5
                            + rnd.nextGaussian() * 0.3);
                }
            }
        }
        MemoryEncoder cpu = new MemoryEncoder(sd, config);
        float[] noObject = sd.get("no_obj_embed_spatial", 1, md).data();
        float[][] ref = new float[batch][];
        try (CpuThreadPool threads = new CpuThreadPool(Runtime.getRuntime().availableProcessors())) {
            for (int b = 0; b < batch; b++) {
                float[] one = new float[l * l];
                System.arraycopy(logits, b * l * l, one, 0, l * l);
                float[] feat = new float[f * f * c];
                System.arraycopy(pix, b * f * f * c, feat, 0, feat.length);
                ref[b] = cpu.encode(threads, feat, MemoryEncoder.scaledMask(one, l, config.imageSize(), fromPrompt[b]));
                if (absent[b]) {
                    for (int i = 0; i < ref[b].length; i++) {
                        ref[b][i] += noObject[i % md];
                    }
                }
            }
        }
        long mark = gpu.pool.mark();
        try {
            CudaMemoryEncoder encoder = new CudaMemoryEncoder(sd, config, batch, gpu.kernels, gpu.stream, gpu.pool,
                    gpu.staging);
            DeviceBuffer pixDev = gpu.pool.allocateBf16(pix.length, "features");
            gpu.staging.putBf16(0, pix);
            gpu.stream.upload(gpu.staging, 0, pixDev, 0, (long) pix.length * 2);
            DeviceBuffer logitsDev = gpu.pool.allocate((long) logits.length * 4, "logits");
            gpu.stream.synchronize();
            gpu.staging.buffer().asFloatBuffer().put(logits);
            gpu.stream.upload(gpu.staging, 0, logitsDev, 0, (long) logits.length * 4);
            gpu.stream.synchronize();
            // the decoder's object scores: absent objects' not above 0 (one NaN, which counts as absent too)
            float[] scores = new float[batch];
            for (int b = 0; b < batch; b++) {
                scores[b] = absent[b] ? (b % 2 == 0 ? Float.NaN : -2f) : 3f;
            }
            DeviceBuffer scoresDev = gpu.pool.allocate((long) batch * 4, "object scores");
            gpu.staging.buffer().asFloatBuffer().put(scores);
            gpu.stream.upload(gpu.staging, 0, scoresDev, 0, (long) batch * 4);
            gpu.stream.synchronize();
            encoder.forward(batch, pixDev, logitsDev, fromPrompt, scoresDev);
            gpu.stream.download(encoder.output(), 0, gpu.staging, 0, (long) batch * f * f * md * 2);
            gpu.stream.synchronize();
            float[] out = gpu.staging.getBf16(0, batch * f * f * md);
            for (int b = 0; b < batch; b++) {
                double num = 0, den = 0;
                for (int i = 0; i < ref[b].length; i++) {
                    float o = out[b * f * f * md + i];
                    assertTrue(Float.isFinite(o), what + " object " + b + ": value " + i + " is " + o);
                    num += (o - ref[b][i]) * (double) (o - ref[b][i]);
                    den += ref[b][i] * (double) ref[b][i];
                }
                double rel = Math.sqrt(num / den);
                System.out.printf("%s object %d (prompt %s, absent %s): memory relative L2 error %.3e%n", what, b,
                        fromPrompt[b], absent[b], rel);
                assertTrue(rel < MAX_REL_L2, what + " object " + b + ": relative L2 error " + rel);
            }
        } finally {
            gpu.pool.release(mark);
        }
    }
}
