package io.samstream.gpu.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.samstream.gpu.image.PillowBilinearResize.Pass;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link PillowBilinearResize#passes}, executed the way the CUDA kernels execute them (image_ops.cuh: one
 * output byte per thread, generic over the axis), gives {@link PillowBilinearResize#resize}'s bytes.
 */
class ResizePassesTest {

    /** One pass as the GPU runs it: out(x, y, c) from the row (horizontal) or column (vertical) of taps. */
    static byte[] execute(Pass p, byte[] in) {
        byte[] out = new byte[p.outWidth() * p.outHeight() * 3];
        int rowStride = p.inWidth() * 3;
        for (int i = 0; i < out.length; i++) {
            int c = i % 3;
            int pixel = i / 3;
            int x = pixel % p.outWidth();
            int y = pixel / p.outWidth();
            int o = p.horizontal() ? x : y;
            int start = p.bounds()[2 * o];
            int count = p.bounds()[2 * o + 1];
            int src = p.horizontal() ? (y + p.firstRow()) * rowStride + start * 3 + c : start * rowStride + x * 3 + c;
            int step = p.horizontal() ? 3 : rowStride;
            int acc = 1 << 21;
            for (int k = 0; k < count; k++) {
                acc += (in[src + k * step] & 0xFF) * p.weights()[o * p.kernelSize() + k];
            }
            out[i] = PillowBilinearResize.clip8(acc);
        }
        return out;
    }

    static byte[] executeAll(List<Pass> passes, byte[] in) {
        byte[] cur = in;
        for (Pass p : passes) {
            cur = execute(p, cur);
        }
        return cur;
    }

    @ParameterizedTest(name = "{0}x{1} -> {2}x{3}")
    @CsvSource({
        "192, 108, 128, 72", "64, 48, 128, 96", "30, 70, 55, 128", "5, 3, 128, 77", "128, 128, 128, 128",
        "128, 50, 128, 77", "50, 128, 77, 128", "3, 301, 1, 128", "2, 250, 2, 100", "1, 1, 9, 4", "640, 480, 100, 75",
        "300, 200, 31, 17"})
    void passesReproduceTheResize(int w, int h, int outW, int outH) {
        Random rnd = new Random(w * 7919L + h);
        byte[] rgb = new byte[w * h * 3];
        for (int i = 0; i < rgb.length; i++) {
            // noise on a gradient: every weight matters, and hard edges clip
            rgb[i] = (byte) (rnd.nextInt(5) == 0 ? rnd.nextInt(256) : (i / 3 % w) * 255 / Math.max(1, w - 1));
        }
        RgbImage image = new RgbImage(w, h, rgb);
        List<Pass> passes = PillowBilinearResize.passes(w, h, outW, outH);
        byte[] expected = PillowBilinearResize.resize(image, outW, outH).rgb();
        assertArrayEquals(expected, executeAll(passes, rgb));
        if (w == outW && h == outH) {
            assertEquals(0, passes.size());
        }
        if (!passes.isEmpty()) {
            Pass last = passes.get(passes.size() - 1);
            assertEquals(outW, last.outWidth());
            assertEquals(outH, last.outHeight());
        }
    }

    @Test
    void aTallImageIsResizedHeightFirst() {
        List<Pass> passes = PillowBilinearResize.passes(3, 301, 1, 128);
        assertEquals(2, passes.size());
        assertEquals(false, passes.get(0).horizontal());
        assertEquals(true, passes.get(1).horizontal());
    }

    @Test
    void badSizesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> PillowBilinearResize.passes(0, 5, 5, 5));
        assertThrows(IllegalArgumentException.class, () -> PillowBilinearResize.passes(5, 5, 5, -1));
    }
}
