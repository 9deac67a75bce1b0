package io.samstream.gpu.sam2;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Random;
import org.junit.jupiter.api.Test;

class RotaryEncodingTest {
    private static final int SIDE = 4;
    private static final int D = 8;

    private static float[] random(Random r, int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) r.nextGaussian();
        }
        return x;
    }

    /** compute_axial_cis + apply_rotary_enc written out in double, token t = (t % side, t / side). */
    private static double[] reference(float[] x, int t, int off) {
        double[] out = new double[D];
        for (int j = 0; j < D / 2; j++) {
            int q = j % (D / 4);
            double freq = 1.0 / Math.pow(10000.0, 4.0 * q / D);
            double pos = j < D / 4 ? t % SIDE : t / SIDE;
            double a = pos * freq;
            double re = x[off + 2 * j];
            double im = x[off + 2 * j + 1];
            out[2 * j] = re * Math.cos(a) - im * Math.sin(a);
            out[2 * j + 1] = re * Math.sin(a) + im * Math.cos(a);
        }
        return out;
    }

    @Test
    void rotatesPairsByAxialAnglesPerHead() {
        Random r = new Random(1);
        int heads = 2;
        int tokens = SIDE * SIDE;
        float[] x = random(r, tokens * heads * D);
        float[] y = x.clone();
        new RotaryEncoding(D, SIDE, 10000.0).apply(y, tokens, heads);
        for (int t = 0; t < tokens; t++) {
            for (int h = 0; h < heads; h++) {
                int off = (t * heads + h) * D;
                double[] ref = reference(x, t, off);
                for (int i = 0; i < D; i++) {
                    assertEquals(ref[i], y[off + i], 1e-5, "token " + t + " head " + h + " channel " + i);
                }
            }
        }
    }

    @Test
    void scoresDependOnlyOnTheOffsetBetweenPositions() {
        Random r = new Random(2);
        RotaryEncoding rope = new RotaryEncoding(D, SIDE, 10000.0);
        float[] q = random(r, D);
        float[] k = random(r, D);
        // q at (1, 0) and k at (0, 1) vs q at (3, 2) and k at (2, 3): the same offset (1, -1)
        double a = rotatedDot(rope, q, 1, k, SIDE);
        double b = rotatedDot(rope, q, 2 * SIDE + 3, k, 3 * SIDE + 2);
        assertEquals(a, b, 1e-5);
    }

    private static double rotatedDot(RotaryEncoding rope, float[] q, int tq, float[] k, int tk) {
        int tokens = SIDE * SIDE;
        float[] qs = new float[tokens * D];
        float[] ks = new float[tokens * D];
        System.arraycopy(q, 0, qs, tq * D, D);
        System.arraycopy(k, 0, ks, tk * D, D);
        rope.apply(qs, tokens, 1);
        rope.apply(ks, tokens, 1);
        double dot = 0;
        for (int i = 0; i < D; i++) {
            dot += qs[tq * D + i] * ks[tk * D + i];
        }
        return dot;
    }

    @Test
    void longerKeysRepeatTheMapAndPointerTokensStayUnrotated() {
        Random r = new Random(3);
        int tokens = SIDE * SIDE;
        RotaryEncoding rope = new RotaryEncoding(D, SIDE, 10000.0);
        float[] one = random(r, tokens * D);
        float[] keys = new float[(2 * tokens + 3) * D];
        System.arraycopy(one, 0, keys, 0, one.length);
        System.arraycopy(one, 0, keys, one.length, one.length);
        float[] pointers = random(r, 3 * D);
        System.arraycopy(pointers, 0, keys, 2 * one.length, pointers.length);
        rope.apply(keys, 2 * tokens, 1);
        rope.apply(one, tokens, 1);
        for (int i = 0; i < one.length; i++) {
            assertEquals(one[i], keys[i]);
            assertEquals(one[i], keys[one.length + i]);
        }
        float[] tail = new float[3 * D];
        System.arraycopy(keys, 2 * one.length, tail, 0, tail.length);
        assertArrayEquals(pointers, tail);
        assertThrows(IllegalArgumentException.class, () -> rope.apply(new float[20 * D], 20, 1));
        assertThrows(IllegalArgumentException.class, () -> new RotaryEncoding(6, SIDE, 10000.0));
    }
}
