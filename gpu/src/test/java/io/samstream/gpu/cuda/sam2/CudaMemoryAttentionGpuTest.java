package io.samstream.gpu.cuda.sam2;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.ModelCheckpoints;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cuda.Bf16;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.sam2.MemoryAttention;
import io.samstream.gpu.sam2.PositionEncodings;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Shapes;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * SAM 2's memory attention on the GPU (bf16, RoPE, the 256-wide single head on its own attention kernel) against the
 * fp32 CPU reference on the same inputs (rounded to bf16 first): the tiny fixture model (2 heads of 32, 8 x 8 maps)
 * and random weights at the releases' shapes (64 x 64 maps, 2 memories + 4 object pointers, two maps batched, each
 * with its own memory). A wrong rotation, key mask or batch stride puts the relative L2 error near 1.
 */
class CudaMemoryAttentionGpuTest extends GpuTestBase {
    private static final double MAX_REL_L2 = 0.03;

    @Test
    void tinyFixtureModelMatchesTheCpuReference() {
        StateDict sd = ModelCheckpoints.load(CudaSam2ImageEncoderGpuTest.FIXTURES.resolve("sam2/tiny/checkpoint.pt"));
        compare("tiny fixture", sd, ModelCheckpoints.sam2Config(sd), 1, 3, 2, 41);
    }

    @Test
    void releaseShapesMatchTheCpuReference() {
        Sam2Config config = Sam2Shapes.release("hiera_tiny");
        compare("hiera_tiny shapes", Sam2Shapes.random(Sam2Shapes.memoryAttention(config), 51), config, 2, 2, 4, 52);
    }

    /** {@code batch} maps, each conditioned on {@code memories} memory maps and {@code pointers} object pointers. */
    private static void compare(String what, StateDict sd, Sam2Config config, int batch, int memories, int pointers,
                                long seed) {
        int side = config.featureSize();
        int n = side * side, d = config.hidden(), md = config.memDim();
        int pointerTokens = pointers * (d / md);
        int m = memories * n + pointerTokens;
        Random rnd = new Random(seed);
        float[] curr = bf16Gaussian(rnd, batch * n * d);
        float[] memory = bf16Gaussian(rnd, batch * m * md);
        float[] memoryPos = bf16Gaussian(rnd, batch * m * md);
        float[] ref = new float[batch * n * d];
        MemoryAttention cpu = new MemoryAttention(sd, config);
        float[] currPos = PositionEncodings.sine2d(side, side, d);
        try (CpuThreadPool threads = new CpuThreadPool(Runtime.getRuntime().availableProcessors())) {
            for (int b = 0; b < batch; b++) {
                float[] one = cpu.forward(threads, Arrays.copyOfRange(curr, b * n * d, (b + 1) * n * d), currPos, n,
                        Arrays.copyOfRange(memory, b * m * md, (b + 1) * m * md),
                        Arrays.copyOfRange(memoryPos, b * m * md, (b + 1) * m * md), m, pointerTokens);
                System.arraycopy(one, 0, ref, b * n * d, n * d);
            }
        }
        long mark = gpu.pool.mark();
        try {
            CudaMemoryAttention attention = new CudaMemoryAttention(sd, config, batch, m, gpu.kernels, gpu.stream,
                    gpu.pool, gpu.staging);
            DeviceBuffer currDev = upload(curr), memDev = upload(memory), posDev = upload(memoryPos);
            attention.forward(batch, currDev, memDev, posDev, m, pointerTokens);
            gpu.stream.synchronize();
            float[] out = download(attention.output(), batch * n * d);
            double num = 0, den = 0;
            for (int i = 0; i < ref.length; i++) {
                assertTrue(Float.isFinite(out[i]), what + ": value " + i + " is " + out[i]);
                num += (out[i] - ref[i]) * (double) (out[i] - ref[i]);
                den += ref[i] * (double) ref[i];
            }
            double rel = Math.sqrt(num / den);
            System.out.printf("%s: memory attention relative L2 error %.3e over %d values%n", what, rel, ref.length);
            assertTrue(rel < MAX_REL_L2, what + ": relative L2 error " + rel);
        } finally {
            gpu.pool.release(mark);
        }
    }

    private static float[] bf16Gaussian(Random rnd, int count) {
        float[] v = new float[count];
        for (int i = 0; i < count; i++) {
            v[i] = Bf16.round((float) rnd.nextGaussian());
        }
        return v;
    }

    private static DeviceBuffer upload(float[] values) {
        DeviceBuffer b = gpu.pool.allocateBf16(values.length, "test input");
        gpu.staging.putBf16(0, values);
        gpu.stream.upload(gpu.staging, 0, b, 0, (long) values.length * 2);
        gpu.stream.synchronize();
        return b;
    }

    private static float[] download(DeviceBuffer b, int count) {
        gpu.stream.download(b, 0, gpu.staging, 0, (long) count * 2);
        gpu.stream.synchronize();
        return gpu.staging.getBf16(0, count);
    }
}
