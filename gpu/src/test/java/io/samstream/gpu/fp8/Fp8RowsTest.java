package io.samstream.gpu.fp8;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

class Fp8RowsTest {
    /** Each row's largest magnitude maps to +-448 exactly; its scale is amax / 448; other rows are not affected. */
    @Test
    void scalesEachRowByItsOwnMaximum() {
        float[] x = {1f, -3f, 0.5f, 2f, /* outlier row */ 1000f, 1f, -1f, 0.001f};
        Fp8Rows q = Fp8Rows.quantize(x, 2, 4);
        assertEquals(3f / 448f, q.scales()[0]);
        assertEquals(1000f / 448f, q.scales()[1]);
        assertEquals((byte) 0xFE, q.values()[1]);   // -3 -> -448
        assertEquals((byte) 0x7E, q.values()[4]);   // 1000 -> 448
        assertEquals(E4m3.encode(1f * (448f / 3f)), q.values()[0]);
        assertEquals(1f, q.value(0, 0), 1f / 16);
        // the outlier flattens only its own row: 0.001 of a row with max 1000 is far below e4m3's smallest step there
        assertEquals(0f, q.value(1, 3));
        assertEquals(0.5f, q.value(0, 2), 0.5f / 16);
    }

    /** Dequantized, every element is within half an e4m3 step of the original (relative 2^-4 for normal values). */
    @Test
    void errorIsWithinHalfAStep() {
        Random rnd = new Random(3);
        int rows = 64, cols = 200;
        float[] x = new float[rows * cols];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) (rnd.nextGaussian() * Math.exp(rnd.nextGaussian()));
        }
        Fp8Rows q = Fp8Rows.quantize(x, rows, cols);
        float[] d = q.dequantize();
        for (int r = 0; r < rows; r++) {
            float scale = q.scales()[r];
            for (int c = 0; c < cols; c++) {
                float v = x[r * cols + c];
                // normal range: half a step relative; subnormal range: half of 2^-9, in units of the row's scale
                double bound = Math.max(Math.abs(v) / 16, 0x1p-10 * scale) * 1.0001;
                assertTrue(Math.abs(d[r * cols + c] - v) <= bound, "row " + r + " col " + c + ": " + v + " -> "
                        + d[r * cols + c]);
            }
        }
    }

    @Test
    void aRowOfZerosGetsZeroBytesAndAFiniteScale() {
        Fp8Rows q = Fp8Rows.quantize(new float[8], 2, 4);
        assertArrayEquals(new byte[8], q.values());
        assertEquals(Fp8Rows.MIN_AMAX / 448f, q.scales()[0]);
        assertTrue(Float.isFinite(q.scales()[1]) && q.scales()[1] > 0);
    }

    @Test
    void aNonFiniteWeightIsNamed() {
        float[] w = {1f, 2f, Float.NaN, 4f};
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Fp8Rows.quantizeWeight(w, 2, 2, "blocks.0.attn.qkv.weight"));
        assertTrue(e.getMessage().contains("blocks.0.attn.qkv.weight: weight [1, 0] is NaN"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Fp8Rows.quantize(new float[5], 2, 3));
    }
}
