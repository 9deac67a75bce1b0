package io.samstream.gpu.cuda.sam;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.cuda.Cuda;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.GpuTestSupport;
import io.samstream.gpu.cuda.kernels.ImageOpsKernels;
import io.samstream.gpu.image.FramePreprocessor;
import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.image.MaskPostprocessor;
import io.samstream.gpu.image.ResizeLongestSide;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.model.RandomSamWeights;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The GPU pre- and post-processing (image_ops.cuh through {@link GpuFramePreprocessor},
 * {@link GpuMaskPostprocessor} and {@link CudaSamBackend}) against the CPU reference classes.
 *
 * <p>Both are designed to be bit-exact (integer resize with the host's weights; IEEE subtract / divide;
 * explicit fma in PyTorch's order), and each test prints whether they were. The assertions allow what a
 * single rounding difference could cause: pre-processing, one 8-bit level (1 / 57.12 = 0.0175 after
 * normalization) on at most 0.1% of the values; post-processing, mask pixels whose CPU logit is within
 * 1e-3 of 0 (at most 1e-5 of the pixels), stability within 1e-3, area and box consistent with those pixels.
 */
class ImageOpsGpuTest extends GpuTestBase {
    private static final int S = 1024;
    private static final double ONE_LEVEL = 1.0 / 57.12 + 1e-6;

    private static RgbImage frame(int w, int h, long seed) {
        return GpuTestSupport.testImage(w, h, seed);
    }

    private float[] downloadF32(DeviceBuffer b, long fromFloat, int n) {
        gpu.stream.synchronize();
        gpu.stream.download(b, fromFloat * 4, gpu.staging, 0, (long) n * 4);
        gpu.stream.synchronize();
        float[] out = new float[n];
        gpu.staging.buffer().asFloatBuffer().get(out);
        return out;
    }

    /** Compares each slot with the CPU batch; returns the number of differing values. */
    private long compareBatch(List<RgbImage> frames, DeviceBuffer images, String what) {
        Tensor expected = new FramePreprocessor(S).batch(frames);
        int per = 3 * S * S;
        long differing = 0;
        for (int i = 0; i < frames.size(); i++) {
            float[] got = downloadF32(images, (long) i * per, per);
            double maxDiff = 0;
            int diffs = 0;
            for (int k = 0; k < per; k++) {
                float want = expected.data()[i * per + k];
                if (Float.isNaN(got[k])) {
                    throw new AssertionError(what + " frame " + i + " value " + k + " is NaN (never written)");
                }
                double d = Math.abs((double) got[k] - want);
                if (d != 0) {
                    diffs++;
                    maxDiff = Math.max(maxDiff, d);
                }
            }
            RgbImage f = frames.get(i);
            System.out.printf("preprocess %s %dx%d: %d of %d values differ, max |diff| %.3g%s%n", what, f.width(),
                    f.height(), diffs, per, maxDiff, diffs == 0 ? " (bit-exact)" : "");
            assertTrue(maxDiff <= ONE_LEVEL, what + " frame " + f.width() + "x" + f.height() + ": max |diff| " + maxDiff);
            assertTrue(diffs <= per / 1000, what + " frame " + f.width() + "x" + f.height() + ": " + diffs + " values differ");
            differing += diffs;
        }
        return differing;
    }

    @Test
    void preprocessingMatchesTheCpuReference() {
        long mark = gpu.pool.mark();
        List<RgbImage> frames = new ArrayList<>(List.of(frame(1920, 1080, 1), frame(640, 480, 2), frame(300, 700, 3),
                frame(5, 3, 4), frame(3, 400, 5), frame(1024, 1024, 6), frame(700, 1024, 7), frame(2000, 10, 8),
                frame(100, 60, 9), frame(2000, 1, 10), frame(1, 2000, 11)));
        DeviceBuffer images = gpu.pool.allocate(3L * S * S * 4 * frames.size(), "images");
        try (GpuFramePreprocessor pre = new GpuFramePreprocessor(gpu.context, new ImageOpsKernels(gpu.kernels), S)) {
            gpu.stream.fill16(images, (short) -1); // NaN everywhere
            pre.enqueue(gpu.stream, frames, images);
            long first = compareBatch(frames, images, "batch");
            // Again in the other order: the staging slots, events and scratch are reused (and grow).
            Collections.reverse(frames);
            gpu.stream.fill16(images, (short) -1);
            pre.enqueue(gpu.stream, frames, images);
            long second = compareBatch(frames, images, "reversed");
            System.out.println("preprocess: " + (first + second == 0 ? "bit-exact" : (first + second) + " values differ")
                    + " on " + 2 * frames.size() + " frames; staging + scratch held " + Cuda.bytes(pre.bytesHeld()));
            assertThrows(IllegalArgumentException.class, () -> pre.enqueue(gpu.stream, List.of(), images));
            assertThrows(IllegalArgumentException.class, () -> pre.enqueue(gpu.stream,
                    Collections.nCopies(frames.size() + 1, frames.get(0)), images));
        } finally {
            gpu.stream.synchronize();
            gpu.pool.release(mark);
        }
    }

    /** Low-res planes: blobs with noise around 0 and exact 0 / +-1 values, as the decoder's logits look. */
    private static Tensor logits(int n, int l, long seed) {
        Random rnd = new Random(seed);
        float[] v = new float[n * l * l];
        for (int m = 0; m < n; m++) {
            double cx = rnd.nextDouble() * l, cy = rnd.nextDouble() * l, r = 8 + rnd.nextDouble() * l / 3;
            for (int y = 0; y < l; y++) {
                for (int x = 0; x < l; x++) {
                    int i = (m * l + y) * l + x;
                    v[i] = (float) ((r - Math.hypot(x - cx, y - cy)) * 0.5 + rnd.nextGaussian() * 0.4);
                    int special = rnd.nextInt(300);
                    if (special < 3) {
                        v[i] = new float[] {0f, 1f, -1f}[special];
                    }
                }
            }
        }
        if (n > 2) {
            java.util.Arrays.fill(v, 2 * l * l, 3 * l * l, -3f); // an empty mask
        }
        return new Tensor(v, n, l, l);
    }

    /** Asserts one GPU summary against the CPU one; returns the number of differing mask pixels. */
    private static long compareSummary(int inputSize, MaskSummary cpu, MaskSummary gpuS, Tensor plane,
            ImageSize resized, ImageSize original, String what) {
        long[] a = cpu.columnMajorBits();
        long[] b = gpuS.columnMajorBits();
        assertEquals(original.height(), gpuS.height(), what);
        assertEquals(original.width(), gpuS.width(), what);
        long differing = 0;
        for (int i = 0; i < a.length; i++) {
            differing += Long.bitCount(a[i] ^ b[i]);
        }
        if (differing > 0) {
            float[] up = new MaskPostprocessor(inputSize).upscaleLogits(plane, resized, original).data();
            int h = original.height();
            for (int i = 0; i < a.length; i++) {
                long x = a[i] ^ b[i];
                while (x != 0) {
                    long p = (long) i * 64 + Long.numberOfTrailingZeros(x);
                    x &= x - 1;
                    float v = up[(int) (p % h) * original.width() + (int) (p / h)];
                    assertTrue(Math.abs(v) < 1e-3, what + ": pixel " + p + " differs with logit " + v);
                }
            }
            assertTrue(differing <= Math.max(1, original.pixels() / 100_000), what + ": " + differing + " pixels differ");
        }
        assertEquals(cpu.area(), gpuS.area(), differing, what + " area");
        assertEquals(cpu.stability(), gpuS.stability(), 1e-3, what + " stability");
        int[] cb = cpu.box();
        int[] gb = gpuS.box();
        for (int k = 0; k < 4; k++) {
            assertEquals(cb[k], gb[k], differing == 0 ? 0 : 1, what + " box " + k);
        }
        if (differing == 0) {
            assertEquals(cpu.stableCount(), gpuS.stableCount(), what);
            assertEquals(cpu.looseCount(), gpuS.looseCount(), what);
            assertEquals(cpu.rle().countsString(), gpuS.rle().countsString(), what);
        }
        return differing;
    }

    @Test
    void postprocessingMatchesTheCpuReference() {
        int l = 256;
        int[][] originals = {{1080, 1920}, {480, 640}, {700, 300}, {3, 5}, {1024, 1024}, {1, 1}, {2160, 3840}};
        long mark = gpu.pool.mark();
        long differing = 0;
        long pixels = 0;
        try (GpuMaskPostprocessor post = new GpuMaskPostprocessor(gpu.context, new ImageOpsKernels(gpu.kernels), S)) {
            for (int[] o : originals) {
                ImageSize original = new ImageSize(o[0], o[1]);
                ImageSize resized = ResizeLongestSide.preprocessShape(o[0], o[1], S);
                Tensor lowRes = logits(3, l, o[0] * 7919L + o[1]);
                List<MaskSummary> cpu = new MaskPostprocessor(S).summarize(lowRes, resized, original);
                List<MaskSummary> host = post.run(lowRes, resized, original);
                // the same logits already on the device, on the caller's stream
                DeviceBuffer dev = gpu.pool.allocate(4L * lowRes.size(), "logits");
                gpu.staging.buffer().asFloatBuffer().put(lowRes.data());
                gpu.stream.upload(gpu.staging, 0, dev, 0, 4L * lowRes.size());
                List<MaskSummary> device = post.run(gpu.stream, dev, 3, l, l, resized, original);
                assertEquals(3, host.size());
                for (int m = 0; m < 3; m++) {
                    String what = "mask " + m + " at " + original + " (resized " + resized + ")";
                    Tensor plane = new Tensor(java.util.Arrays.copyOfRange(lowRes.data(), m * l * l, (m + 1) * l * l), 1,
                            l, l);
                    differing += compareSummary(S, cpu.get(m), host.get(m), plane, resized, original, what);
                    assertArrayEquals(host.get(m).columnMajorBits(), device.get(m).columnMajorBits(), what + " device input");
                    assertEquals(host.get(m).stability(), device.get(m).stability(), what + " device input");
                    pixels += original.pixels();
                }
                assertEquals(0, host.get(2).area(), "the all-negative plane is empty");
                assertTrue(host.get(0).area() > 0 || original.pixels() < 100, "mask 0 at " + original + " has pixels");
                System.out.printf("postprocess %s: %s%n", original, host.get(0));
            }
            System.out.println("postprocess: " + (differing == 0 ? "bit-exact" : differing + " mask pixels differ") + " over "
                    + pixels + " pixels");
            assertThrows(IllegalArgumentException.class, () -> post.run(logits(1, l, 1), new ImageSize(1025, 10),
                    new ImageSize(2000, 20)));
        } finally {
            gpu.stream.synchronize();
            gpu.pool.release(mark);
        }
    }

    @Test
    void backendEncodeFramesEqualsEncodeOfTheCpuBatchAndPostprocessesOnTheGpu() {
        SamConfig config = RandomSamWeights.tinyConfig();
        int s = config.imageSize();
        try (CudaSamBackend backend = new CudaSamBackend(RandomSamWeights.stateDict(config, 11), config,
                CudaSamOptions.of(4))) {
            List<RgbImage> frames = List.of(frame(192, 108, 21), frame(40, 64, 22), frame(3, 2, 23), frame(64, 64, 24));
            Tensor viaGpu = backend.encodeFrames(frames);
            Tensor viaCpu = backend.encode(new FramePreprocessor(s).batch(frames));
            assertArrayEquals(viaCpu.shape(), viaGpu.shape());
            GpuTestSupport.assertClose("encodeFrames vs encode(CPU batch)", viaCpu.data(), viaGpu.data(), 0, 1e-6);
            assertThrows(IllegalArgumentException.class, () -> backend.encodeFrames(Collections.nCopies(5, frames.get(0))));

            int l = config.lowResSize();
            ImageSize original = new ImageSize(108, 192);
            ImageSize resized = ResizeLongestSide.preprocessShape(108, 192, s);
            Tensor lowRes = logits(3, l, 5);
            List<MaskSummary> cpu = new MaskPostprocessor(s).summarize(lowRes, resized, original);
            List<MaskSummary> got = backend.postprocessMasks(lowRes, resized, original);
            for (int m = 0; m < 3; m++) {
                Tensor plane = new Tensor(java.util.Arrays.copyOfRange(lowRes.data(), m * l * l, (m + 1) * l * l), 1, l, l);
                compareSummary(s, cpu.get(m), got.get(m), plane, resized, original, "backend mask " + m);
            }
        }
    }
}
