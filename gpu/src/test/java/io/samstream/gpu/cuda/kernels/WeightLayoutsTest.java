package io.samstream.gpu.cuda.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The host-side weight layouts of {@link WeightLayouts} (no GPU needed). */
class WeightLayoutsTest {
    @Test
    void conv3x3WeightGoesChannelsLast() {
        int o = 2, c = 3;
        float[] w = new float[o * c * 9];
        for (int i = 0; i < w.length; i++) {
            w[i] = i;
        }
        float[] r = WeightLayouts.conv3x3ChannelsLast(w, o, c);
        for (int oo = 0; oo < o; oo++) {
            for (int cc = 0; cc < c; cc++) {
                for (int ky = 0; ky < 3; ky++) {
                    for (int kx = 0; kx < 3; kx++) {
                        assertEquals(w[((oo * c + cc) * 3 + ky) * 3 + kx], r[((oo * 3 + ky) * 3 + kx) * c + cc]);
                    }
                }
            }
        }
    }
}
