package io.samstream.gpu.cuda.sam3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ModelPrecision;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.Cuda;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.GpuTestSupport;
import io.samstream.gpu.cuda.StagedCopy;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.sam3.Sam3Checkpoint;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3ConfigInference;
import io.samstream.gpu.sam3.Sam3Preprocessor;
import io.samstream.gpu.tensor.Npy;
import io.samstream.gpu.tensor.NpyArray;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * SAM 3's pre-processing on the GPU ({@link Sam3GpuPreprocessor}: image_ops.cuh's Pillow passes and the scale-first
 * normalization) against {@link Sam3Preprocessor#modelInput}, which it is built to equal bit for bit: every value is
 * compared by its bits, and the test fails on any difference. Images smaller and larger than S, odd sizes, portrait,
 * the bound's largest, one already S x S (no pass), one pass only, Pillow's height-first rule for very tall images;
 * at the release's S = 1008 and the tiny model's 112 and at 7. The frames of a batch are queued back to back with no
 * synchronization (the pinned slots come round, the pass tables change or stay), each into its own slice of one
 * buffer poisoned with NaN. Then the tiny fixture model's trunk reads the GPU input in place (its input buffer equals
 * the CPU's model input, and the map equals the map from the CPU input).
 */
class Sam3GpuPreprocessorGpuTest extends GpuTestBase {

    static RgbImage image(int w, int h, long seed) {
        return GpuTestSupport.testImage(w, h, seed);
    }

    @Test
    void releaseSizeMatchesTheCpuBitForBit() {
        List<RgbImage> frames = new ArrayList<>(List.of(image(1920, 1080, 1), image(1080, 1920, 2),
                image(640, 480, 3), image(640, 480, 4), image(1008, 1008, 5), image(1008, 700, 6), image(500, 1008, 7),
                image(333, 777, 8), image(4096, 2160, 9), image(2160, 4096, 10), image(5, 1200, 11), image(1, 1, 12),
                image(2000, 1, 13), image(3, 2, 14), image(1009, 1007, 15)));
        compare(1008, frames);
    }

    @Test
    void tinySizesMatchTheCpuBitForBit() {
        List<RgbImage> frames = List.of(image(160, 120, 21), image(120, 160, 22), image(112, 112, 23),
                image(112, 50, 24), image(111, 113, 25), image(7, 7, 26), image(1, 1, 27), image(3, 900, 28),
                image(1280, 720, 29));
        compare(112, frames);
        compare(7, frames);
    }

    /** Queues every frame (twice: in order, then reversed) into its own slice, then compares them all. */
    private static void compare(int s, List<RgbImage> frames) {
        long mark = gpu.pool.mark();
        long per = Sam3GpuPreprocessor.inputBytes(s);
        try (Sam3GpuPreprocessor pre = new Sam3GpuPreprocessor(gpu.kernels, gpu.stream, gpu.pool, s)) {
            long used = gpu.pool.used();
            DeviceBuffer batch = gpu.pool.allocate(per * frames.size(), "sam3 inputs");
            assertTrue(used - mark <= Sam3GpuPreprocessor.poolBytes(s), "the scratch took " + (used - mark)
                    + " B, poolBytes says " + Sam3GpuPreprocessor.poolBytes(s));
            List<RgbImage> order = new ArrayList<>(frames);
            for (int round = 0; round < 2; round++) {
                gpu.stream.fill16(batch, (short) -1); // NaN everywhere
                for (int i = 0; i < order.size(); i++) {
                    pre.enqueue(order.get(i), batch.slice(i * per, per, "input " + i));
                }
                long differing = 0;
                for (int i = 0; i < order.size(); i++) {
                    differing += compareOne(s, order.get(i), batch.slice(i * per, per, "input " + i), round);
                }
                assertEquals(0, differing, "values differ from the CPU's at S = " + s);
                Collections.reverse(order);
            }
            System.out.println("sam3 preprocess S = " + s + ": bit-exact on " + 2 * frames.size() + " frames; pool "
                    + Cuda.bytes(Sam3GpuPreprocessor.poolBytes(s)) + ", pinned " + Cuda.bytes(pre.pinnedBytesHeld()));
        } finally {
            gpu.stream.synchronize();
            gpu.pool.release(mark);
        }
    }

    private static long compareOne(int s, RgbImage f, DeviceBuffer out, int round) {
        float[] want = Sam3Preprocessor.modelInput(f, s);
        float[] got = StagedCopy.downloadF32(gpu.stream, gpu.staging, out, want.length);
        long diffs = 0;
        double maxDiff = 0;
        for (int k = 0; k < want.length; k++) {
            if (Float.isNaN(got[k])) {
                throw new AssertionError(f.width() + "x" + f.height() + " at " + s + ": value " + k
                        + " is NaN (never written)");
            }
            if (Float.floatToRawIntBits(got[k]) != Float.floatToRawIntBits(want[k])) {
                diffs++;
                maxDiff = Math.max(maxDiff, Math.abs((double) got[k] - want[k]));
            }
        }
        System.out.printf("sam3 preprocess round %d %dx%d -> %d: %d of %d values differ, max |diff| %.3g%n", round,
                f.width(), f.height(), s, diffs, want.length, maxDiff);
        return diffs;
    }

    @Test
    void badArgumentsAreRefusedBeforeAnythingIsQueued() {
        long mark = gpu.pool.mark();
        int s = 112;
        long per = Sam3GpuPreprocessor.inputBytes(s);
        Sam3GpuPreprocessor pre = new Sam3GpuPreprocessor(gpu.kernels, gpu.stream, gpu.pool, s, 300, 300 * 200, 1);
        DeviceBuffer out = gpu.pool.allocate(per, "sam3 input");
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> pre.enqueue(image(301, 10, 1), out));
            assertTrue(e.getMessage().contains("301x10"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> pre.enqueue(image(300, 201, 1), out));
            assertTrue(e.getMessage().contains("300x201"), e.getMessage());
            assertThrows(IllegalArgumentException.class,
                    () -> pre.enqueue(image(30, 20, 1), out.slice(0, per - 4, "short")));
            assertThrows(IllegalArgumentException.class,
                    () -> pre.enqueue(image(30, 20, 1), out.slice(2, per - 4, "misaligned")));
            // the refused calls queued nothing and changed nothing: the next frames are right (one slot, reused)
            for (RgbImage f : List.of(image(300, 200, 2), image(200, 300, 3), image(200, 300, 4))) {
                gpu.stream.fill16(out, (short) -1);
                pre.enqueue(f, out);
                assertEquals(0, compareOne(s, f, out, 0));
            }
        } finally {
            pre.close();
            gpu.stream.synchronize();
            gpu.pool.release(mark);
        }
        assertThrows(IllegalStateException.class, () -> pre.enqueue(image(30, 20, 1), out));
    }

    /**
     * The wiring CudaSam3 will use: the tiny fixture image pre-processed on the GPU straight into the trunk's input
     * buffer, one trunk pass, gives the very map the trunk gives on the CPU's model input.
     */
    @Test
    void theTrunkReadsTheGpuInputAsItReadsTheCpus() throws IOException {
        StateDict checkpoint = CheckpointLoader.load(CudaSam3VitGpuTest.TINY.resolve("sam3_tiny.pt"));
        Sam3Config.Vision vision = Sam3ConfigInference.infer(checkpoint).vision();
        NpyArray img = Npy.read(CudaSam3VitGpuTest.TINY.resolve("image.npy"));
        RgbImage rgb = new RgbImage(img.shape()[1], img.shape()[0], img.raw());
        int s = vision.imageSize();
        long mark = gpu.pool.mark();
        try (Sam3GpuPreprocessor pre = new Sam3GpuPreprocessor(gpu.kernels, gpu.stream, gpu.pool, s)) {
            CudaSam3Vit vit = new CudaSam3Vit(Sam3Checkpoint.detector(checkpoint), vision, 1, ModelPrecision.BF16,
                    gpu.kernels, gpu.stream, gpu.pool, gpu.staging);
            float[] fromCpu = vit.forward(Sam3Preprocessor.modelInput(rgb, s)).values();
            gpu.stream.fill16(vit.input(), (short) -1);
            pre.enqueue(rgb, vit.input());
            assertEquals(0, compareOne(s, rgb, vit.input(), 0), "the trunk's input");
            vit.forward(1);
            float[] fromGpu = StagedCopy.downloadBf16(gpu.stream, gpu.staging, vit.output(), fromCpu.length);
            int differ = 0;
            for (int i = 0; i < fromCpu.length; i++) {
                differ += Float.floatToRawIntBits(fromCpu[i]) != Float.floatToRawIntBits(fromGpu[i]) ? 1 : 0;
            }
            // The same input through the same kernels: identical unless a trunk kernel is not deterministic.
            System.out.println("sam3 trunk on the GPU input: " + (differ == 0 ? "identical to" : differ
                    + " values differ from") + " the trunk on the CPU input");
            GpuTestSupport.assertCosineAndRelL2("trunk on the GPU input", fromCpu, fromGpu, 0.99999, 1e-3);
        } finally {
            gpu.stream.synchronize();
            gpu.pool.release(mark);
        }
    }
}
