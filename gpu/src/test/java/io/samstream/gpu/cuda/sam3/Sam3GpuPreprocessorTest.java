package io.samstream.gpu.cuda.sam3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.cuda.sam3.Sam3GpuPreprocessor.Plan;
import io.samstream.gpu.image.PillowBilinearResize;
import io.samstream.gpu.image.PillowBilinearResize.Pass;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.sam3.Sam3Preprocessor;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link Sam3GpuPreprocessor} without a GPU: its argument checks, the bound's arithmetic (every image inside the bound
 * fits the scratch it sized), and its plan executed the way image_ops.cuh executes it (the passes, then the
 * scale-first normalization with the class' constants) giving {@link Sam3Preprocessor#modelInput}'s values bit for
 * bit. Sam3GpuPreprocessorGpuTest runs the kernels themselves.
 */
class Sam3GpuPreprocessorTest {
    private static final int SIDE = Sam3GpuPreprocessor.DEFAULT_MAX_SIDE;
    private static final long PIXELS = Sam3GpuPreprocessor.DEFAULT_MAX_PIXELS;

    @Test
    void imagesOutsideTheBoundAreRefusedByTheirSize() {
        Sam3GpuPreprocessor.checkImage(4096, 2160, SIDE, PIXELS);
        Sam3GpuPreprocessor.checkImage(2160, 4096, SIDE, PIXELS);
        Sam3GpuPreprocessor.checkImage(4096, 1, SIDE, PIXELS);
        Sam3GpuPreprocessor.checkImage(1, 1, SIDE, PIXELS);
        for (int[] wh : new int[][] {{4097, 10}, {10, 4097}, {4096, 2161}, {2161, 4096}, {0, 5}, {5, -1}}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Sam3GpuPreprocessor.checkImage(wh[0], wh[1], SIDE, PIXELS));
            assertTrue(e.getMessage().contains(wh[0] + "x" + wh[1]), e.getMessage());
            assertTrue(e.getMessage().contains("4096") && e.getMessage().contains(Long.toString(PIXELS)),
                    e.getMessage());
        }
    }

    @Test
    void badBoundsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> Sam3GpuPreprocessor.checkBound(0, SIDE, PIXELS));
        assertThrows(IllegalArgumentException.class, () -> Sam3GpuPreprocessor.checkBound(-1008, SIDE, PIXELS));
        assertThrows(IllegalArgumentException.class, () -> Sam3GpuPreprocessor.checkBound(1008, 0, PIXELS));
        assertThrows(IllegalArgumentException.class, () -> Sam3GpuPreprocessor.checkBound(1008, SIDE, 0));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Sam3GpuPreprocessor.checkBound(1008, 100, 100 * 100 + 1));
        assertTrue(e.getMessage().contains("10001"), e.getMessage());
        // a slot past 2 GiB of pinned memory
        e = assertThrows(IllegalArgumentException.class,
                () -> Sam3GpuPreprocessor.checkBound(1008, 40_000, 40_000L * 20_000));
        assertTrue(e.getMessage().contains("2 GiB"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Sam3GpuPreprocessor.poolBytes(0));
        assertThrows(IllegalArgumentException.class, () -> Sam3GpuPreprocessor.slotBytes(1008, 0, 1));
    }

    @Test
    void theDefaultBoundsFootprintIsModest() {
        long pool = Sam3GpuPreprocessor.poolBytes(1008);
        long slot = Sam3GpuPreprocessor.slotBytes(1008, SIDE, PIXELS);
        // frame 26.5 MB + tables (kernels of 11 taps: 2 x 52 KiB) + intermediate 3 x 1008 x 4096 = 12.4 MB
        assertTrue(pool > 3 * PIXELS + 3L * 1008 * SIDE && pool < 40_000_000L, "pool " + pool);
        assertTrue(slot > 3 * PIXELS && slot < 26_700_000L, "slot " + slot);
        assertEquals(3L * 1008 * 1008 * 4, Sam3GpuPreprocessor.inputBytes(1008));
        assertTrue(Sam3GpuPreprocessor.poolBytes(1008, 1920, 1920L * 1080) < pool);
    }

    /** Every image inside the bound fits the scratch and the slot: the largest sides, both orientations, tall ones. */
    @ParameterizedTest(name = "S = {0}, sides up to {1}, {2} pixels")
    @CsvSource({"1008, 4096, 8847360", "112, 4096, 8847360", "7, 4096, 8847360", "1, 300, 90000",
        "1008, 1920, 2073600", "5000, 640, 409600"})
    void everyImageInsideTheBoundFits(int size, int maxSide, long maxPixels) {
        long frame = Sam3GpuPreprocessor.frameRegion(maxPixels);
        long tables = Sam3GpuPreprocessor.tableRegion(size, maxSide);
        long intermediate = Sam3GpuPreprocessor.intermediateBytes(size, maxSide);
        int longest = (int) Math.min(maxSide, maxPixels);
        int shortest = (int) (maxPixels / longest);
        int[][] sizes = {{longest, shortest}, {shortest, longest}, {maxSide, 1}, {1, maxSide}, {1, 1},
            {size, size}, {size, maxSide}, {maxSide, size}, {Math.max(1, maxSide / 101), maxSide},
            {Math.max(1, maxSide / 99), maxSide}, {size + 1, size - 1 > 0 ? size - 1 : 1}, {3, 2}};
        Random rnd = new Random(size);
        for (int k = 0; k < 40; k++) {
            int w = 1 + rnd.nextInt(maxSide), h = 1 + rnd.nextInt((int) Math.min(maxSide, maxPixels / w));
            check(size, w, h, frame, tables, intermediate);
        }
        for (int[] wh : sizes) {
            if (wh[0] <= maxSide && wh[1] <= maxSide && (long) wh[0] * wh[1] <= maxPixels) {
                check(size, wh[0], wh[1], frame, tables, intermediate);
            }
        }
    }

    private static void check(int size, int w, int h, long frame, long tables, long intermediate) {
        Plan p = Sam3GpuPreprocessor.plan(w, h, size);
        String what = w + "x" + h + " at " + size + ": " + p;
        assertTrue(p.rgbBytes <= frame, what);
        assertTrue(p.tableBytes <= tables, what + " (tables bound " + tables + ")");
        assertTrue(p.intermediateBytes <= intermediate, what + " (intermediate bound " + intermediate + ")");
        assertTrue(p.passes.size() <= 2, what);
        if (!p.passes.isEmpty()) {
            Pass last = p.passes.get(p.passes.size() - 1);
            assertEquals(size, last.outWidth(), what);
            assertEquals(size, last.outHeight(), what);
        }
    }

    /** The plan run as the kernels run it equals the CPU's model input, value for value. */
    @ParameterizedTest(name = "{0}x{1} to {2}")
    @CsvSource({"160, 120, 112", "120, 160, 112", "112, 112, 112", "112, 70, 112", "50, 112, 112", "333, 777, 112",
        "3, 2, 112", "1, 1, 7", "5, 600, 112", "600, 5, 112", "2, 250, 7", "40, 30, 7", "1920, 1080, 1008",
        "640, 481, 1008"})
    void thePlanRunAsTheKernelsRunItIsTheCpuInput(int w, int h, int size) {
        RgbImage image = Sam3GpuPreprocessorGpuTest.image(w, h, w * 31L + h);
        float[] expected = Sam3Preprocessor.modelInput(image, size);
        float[] got = emulate(Sam3GpuPreprocessor.plan(w, h, size), image, size);
        assertArrayEquals(expected, got, 0f, w + "x" + h + " to " + size);
        for (int i = 0; i < got.length; i++) {
            if (Float.floatToRawIntBits(got[i]) != Float.floatToRawIntBits(expected[i])) {
                throw new AssertionError("value " + i + ": " + got[i] + " vs " + expected[i]);
            }
        }
    }

    /** Why the kernel divides by 255 first: one subtract and one divide in 8-bit units rounds differently. */
    @Test
    void oneDivideIsNotTheCpusNormalization() {
        int differ = 0;
        for (int u = 0; u < 256; u++) {
            float cpu = ((u / 255f) - 0.5f) / 0.5f;
            float scaleFirst = normalize(u);
            assertEquals(Float.floatToRawIntBits(cpu), Float.floatToRawIntBits(scaleFirst), "byte " + u);
            if (Float.floatToRawIntBits((u - 127.5f) / 127.5f) != Float.floatToRawIntBits(cpu)) {
                differ++;
            }
        }
        assertTrue(differ > 0, "(u - 127.5) / 127.5 would do: the kernel variant is not needed");
    }

    /** The kernel's normalization (image_ops.cuh, kScaleFirst) with the class' constants. */
    private static float normalize(int u) {
        float x = u / Sam3GpuPreprocessor.SCALE;
        return (x - Sam3GpuPreprocessor.MEAN) / Sam3GpuPreprocessor.STD;
    }

    /** The passes (pillow_pass_u8: one byte per output), the last fused with the normalization into [3, S, S]. */
    private static float[] emulate(Plan plan, RgbImage image, int s) {
        byte[] cur = image.rgb();
        int curW = image.width();
        for (int i = 0; i < plan.passes.size(); i++) {
            Pass p = plan.passes.get(i);
            cur = pass(p, cur);
            curW = p.outWidth();
        }
        assertEquals(s, curW);
        float[] out = new float[3 * s * s];
        for (int c = 0; c < 3; c++) {
            for (int y = 0; y < s; y++) {
                for (int x = 0; x < s; x++) {
                    out[(c * s + y) * s + x] = normalize(cur[(y * s + x) * 3 + c] & 0xFF);
                }
            }
        }
        return out;
    }

    private static byte[] pass(Pass p, byte[] in) {
        byte[] out = new byte[p.outWidth() * p.outHeight() * 3];
        int rowStride = p.inWidth() * 3;
        for (int i = 0; i < out.length; i++) {
            int c = i % 3, pixel = i / 3, x = pixel % p.outWidth(), y = pixel / p.outWidth();
            int o = p.horizontal() ? x : y;
            int start = p.bounds()[2 * o], count = p.bounds()[2 * o + 1];
            int src = p.horizontal() ? (y + p.firstRow()) * rowStride + start * 3 + c : start * rowStride + x * 3 + c;
            int step = p.horizontal() ? 3 : rowStride;
            int acc = 1 << 21;
            for (int k = 0; k < count; k++) {
                acc += (in[src + k * step] & 0xFF) * p.weights()[o * p.kernelSize() + k];
            }
            int v = acc >> 22;
            out[i] = (byte) (v < 0 ? 0 : Math.min(v, 255));
        }
        return out;
    }

    @Test
    void thePlanOfAnUnchangedSizeHasNoPass() {
        assertEquals(0, Sam3GpuPreprocessor.plan(1008, 1008, 1008).passes.size());
        assertEquals(1, Sam3GpuPreprocessor.plan(1008, 700, 1008).passes.size());
        assertEquals(1, Sam3GpuPreprocessor.plan(500, 1008, 1008).passes.size());
        assertEquals(2, Sam3GpuPreprocessor.plan(1920, 1080, 1008).passes.size());
        // Pillow's height-first rule: vertical, then horizontal
        Plan tall = Sam3GpuPreprocessor.plan(5, 1200, 112);
        assertEquals(2, tall.passes.size());
        assertTrue(!tall.passes.get(0).horizontal() && tall.passes.get(1).horizontal());
        assertEquals(3L * 5 * 112, tall.intermediateBytes);
        assertEquals(PillowBilinearResize.passes(5, 1200, 112, 112).size(), tall.passes.size());
    }
}
