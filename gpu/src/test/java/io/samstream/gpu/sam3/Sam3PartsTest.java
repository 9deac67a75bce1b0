package io.samstream.gpu.sam3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.samstream.gpu.sam2.RotaryEncoding;
import org.junit.jupiter.api.Test;

/** The small numeric pieces of the SAM 3 reference against values worked out by hand. */
class Sam3PartsTest {
    @Test
    void roiAlignAveragesBilinearSamplesAsTorchvision() {
        // a 4 x 4 single-channel map whose value is x + 10 y: bilinear sampling is exact on it
        float[] map = new float[16];
        for (int y = 0; y < 4; y++) {
            for (int x = 0; x < 4; x++) {
                map[y * 4 + x] = x + 10 * y;
            }
        }
        // box (0.5, 0.5)-(2.5, 2.5) in 2 x 2 bins: each bin 1 px, one sample at its centre
        float[] out = RoiAlign.pool(map, 4, 4, 1, 0.5f, 0.5f, 2.5f, 2.5f, 2);
        assertArrayEquals(new float[] {1 + 10, 2 + 10, 1 + 20, 2 + 20}, out, 1e-6f);
        // a box smaller than a pixel is widened to 1 x 1 (aligned=False)
        float[] tiny = RoiAlign.pool(map, 4, 4, 1, 1f, 1f, 1.2f, 1.2f, 1);
        assertArrayEquals(new float[] {1.5f + 15f}, tiny, 1e-6f);
        // a sample at (3.7, 1.1) beyond the last column clamps to it; more than a pixel outside, samples are 0
        assertArrayEquals(new float[] {3 + 11}, RoiAlign.pool(map, 4, 4, 1, 3.2f, 0.6f, 4.2f, 1.6f, 1), 1e-5f);
        assertArrayEquals(new float[] {0}, RoiAlign.pool(map, 4, 4, 1, 6f, 0f, 7f, 1f, 1), 0f);
    }

    @Test
    void boxBiasSquashIsASignedLog() {
        assertEquals(0f, BoxRelativeBias.squash(0f), 0f);
        assertEquals(1f, BoxRelativeBias.squash(7f / 8), 1e-6f); // log2(8) / 3
        assertEquals(-1f, BoxRelativeBias.squash(-7f / 8), 1e-6f);
        assertEquals((float) (Math.log(2) / Math.log(2) / 3), BoxRelativeBias.squash(1f / 8), 1e-6f);
    }

    @Test
    void sineEmbeddingInterleavesSineAndCosine() {
        float[] out = new float[4];
        SineEmbedding.encode(0.25f, 4, out, 0);
        double e = 0.25 * 2 * Math.PI;
        assertArrayEquals(new float[] {(float) Math.sin(e), (float) Math.cos(e), (float) Math.sin(e / 100),
                (float) Math.cos(e / 100)}, out, 1e-6f);
        float[] boxes = SineEmbedding.boxes(new float[] {0.1f, 0.2f, 0.3f, 0.4f}, 1, 4);
        float[] y = new float[2];
        SineEmbedding.encode(0.2f, 2, y, 0);
        assertEquals(y[0], boxes[0], 0f); // the y block comes first
        float[] x = new float[2];
        SineEmbedding.encode(0.1f, 2, x, 0);
        assertEquals(x[0], boxes[2], 0f);
    }

    @Test
    void inverseSigmoidClampsAsMeta() {
        assertEquals(0f, DetrDecoder.inverseSigmoid(0.5f), 1e-7f);
        assertEquals((float) Math.log(1e-3 / 1), DetrDecoder.inverseSigmoid(0f), 1e-5f);
        assertEquals((float) Math.log(1 / 1e-3), DetrDecoder.inverseSigmoid(1.5f), 1e-4f);
        assertEquals(0.3f, DetrDecoder.sigmoid(DetrDecoder.inverseSigmoid(0.3f)), 1e-6f);
    }

    @Test
    void globalBlocksRotateByPositionsScaledToTheWindow() {
        // a 2 x 2 map scaled by 1/2 rotates token (1, 1) as an unscaled map rotates (0.5, 0.5): half the angle
        RotaryEncoding scaled = new RotaryEncoding(4, 2, 10000.0, 0.5);
        RotaryEncoding plain = new RotaryEncoding(4, 2, 10000.0);
        float[] a = {1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0};
        float[] b = a.clone();
        scaled.apply(a, 4, 1);
        plain.apply(b, 4, 1);
        // token 3 is (x, y) = (1, 1); the first pair turns by x * f0 = 0.5 rad (scaled) and 1 rad (plain)
        assertEquals((float) Math.cos(0.5), a[12], 1e-6f);
        assertEquals((float) Math.sin(0.5), a[13], 1e-6f);
        assertEquals((float) Math.cos(1.0), b[12], 1e-6f);
        // the second pair turns by y
        assertEquals((float) Math.cos(0.5), a[14], 1e-6f);
    }
}
