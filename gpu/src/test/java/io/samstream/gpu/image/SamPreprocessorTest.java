package io.samstream.gpu.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.samstream.gpu.tensor.Tensor;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class SamPreprocessorTest {

    @Test
    void normalizesPerChannelAndPadsBottomRightWithZeros() {
        // 3 wide, 2 high into a 4x4 input.
        byte[] rgb = new byte[3 * 2 * 3];
        for (int i = 0; i < rgb.length; i++) {
            rgb[i] = (byte) (i * 15);
        }
        RgbImage image = new RgbImage(3, 2, rgb);
        Tensor t = new SamPreprocessor(4).apply(image);

        assertArrayEquals(new int[] {1, 3, 4, 4}, t.shape());
        float[] mean = {123.675f, 116.28f, 103.53f};
        float[] std = {58.395f, 57.12f, 57.375f};
        float[] d = t.data();
        for (int c = 0; c < 3; c++) {
            for (int y = 0; y < 4; y++) {
                for (int x = 0; x < 4; x++) {
                    float expected = y < 2 && x < 3 ? (image.get(x, y, c) - mean[c]) / std[c] : 0f;
                    assertEquals(expected, d[(c * 4 + y) * 4 + x], 0f, "c=" + c + " y=" + y + " x=" + x);
                }
            }
        }
        // One value by hand: R of pixel (0,0) is 0 -> -123.675 / 58.395 = -2.1179...
        assertEquals(-2.1179039f, d[0], 1e-6f);
    }

    @Test
    void batchSlotIsWrittenWholeAndOthersAreLeftAlone() {
        Tensor batch = Tensor.zeros(3, 3, 4, 4);
        Arrays.fill(batch.data(), 7f); // a reused batch: stale values everywhere
        RgbImage image = new RgbImage(2, 3, new byte[2 * 3 * 3]);
        new SamPreprocessor(4).applyInto(image, batch, 1);

        float[] d = batch.data();
        int slot = 3 * 16;
        for (int i = 0; i < slot; i++) {
            assertEquals(7f, d[i]); // slot 0 untouched
            assertEquals(7f, d[2 * slot + i]); // slot 2 untouched
        }
        for (int c = 0; c < 3; c++) {
            for (int y = 0; y < 4; y++) {
                for (int x = 0; x < 4; x++) {
                    float expected = y < 3 && x < 2 ? (0f - SamPreprocessor.pixelMean()[c]) / SamPreprocessor.pixelStd()[c] : 0f;
                    assertEquals(expected, d[slot + (c * 4 + y) * 4 + x], 0f);
                }
            }
        }
    }

    @Test
    void refusesImagesLargerThanTheInputAndWrongBatches() {
        SamPreprocessor p = new SamPreprocessor(4);
        assertThrows(IllegalArgumentException.class, () -> p.apply(new RgbImage(5, 1, new byte[15])));
        RgbImage ok = new RgbImage(1, 1, new byte[3]);
        assertThrows(IllegalArgumentException.class, () -> p.applyInto(ok, Tensor.zeros(1, 3, 4, 5), 0));
        assertThrows(IndexOutOfBoundsException.class, () -> p.applyInto(ok, Tensor.zeros(1, 3, 4, 4), 1));
    }
}
