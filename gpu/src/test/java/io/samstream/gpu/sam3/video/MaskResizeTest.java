package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;
import org.junit.jupiter.api.Test;

class MaskResizeTest {
    @Test
    void enlargingAntialiasedIsPlainBilinear() {
        Random r = new Random(3);
        float[] x = new float[9 * 7];
        for (int i = 0; i < x.length; i++) {
            x[i] = r.nextFloat() * 20 - 10;
        }
        assertArrayEquals(MaskResize.bilinear(x, 9, 7, 20, 16), MaskResize.antialiased(x, 9, 7, 20, 16), 1e-5f);
    }

    @Test
    void halvingWeighsThreePixelsWithATriangleOfTwice() {
        // torch: output 0's centre is 1.0 input pixels in; taps at 0.5, 1.5, 2.5 weigh 0.75, 0.75, 0.25 (/ 1.75)
        float[] out = MaskResize.antialiased(new float[] {1, 2, 3, 4}, 1, 4, 1, 2);
        assertEquals((0.75f * 1 + 0.75f * 2 + 0.25f * 3) / 1.75f, out[0], 1e-6f);
        assertEquals((0.25f * 2 + 0.75f * 3 + 0.75f * 4) / 1.75f, out[1], 1e-6f);
    }

    @Test
    void aConstantStaysConstant() {
        float[] x = new float[40 * 40];
        java.util.Arrays.fill(x, 1024f);
        for (float v : MaskResize.antialiased(x, 40, 40, 9, 13)) {
            assertEquals(1024f, v, 1e-3f);
        }
    }
}
