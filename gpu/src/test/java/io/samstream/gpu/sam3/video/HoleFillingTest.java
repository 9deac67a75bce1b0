package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class HoleFillingTest {
    static final int N = 32;

    @Test
    void smallHolesAreFilledAndSprinklesRemoved() {
        float[] m = Masks.logits(N, 4, 4, 20, 20, 3f); // 256 px object
        m[10 * N + 10] = -3f;                         // 1 px hole
        for (int y = 0; y < 3; y++) {
            for (int x = 0; x < 3; x++) {
                m[(26 + y) * N + 26 + x] = 3f;        // 9 px sprinkle, 8-connected blob
            }
        }
        float[] out = HoleFilling.fill(m, N, N, 16);
        assertEquals(0.1f, out[10 * N + 10]);
        assertEquals(-0.1f, out[27 * N + 27]);
        assertEquals(3f, out[5 * N + 5]);
        assertEquals(256, MaskOverlaps.area(MaskOverlaps.binary(out)));
    }

    @Test
    void aSmallObjectAloneIsKept() {
        float[] m = Masks.logits(N, 10, 10, 13, 13, 3f); // 9 px: bound min(16, 9 / 2) = 4
        assertEquals(9, MaskOverlaps.area(MaskOverlaps.binary(HoleFilling.fill(m, N, N, 16))));
    }

    @Test
    void diagonalPixelsAreOneComponent() {
        boolean[] on = new boolean[4 * 4];
        on[0] = true;
        on[5] = true;
        on[10] = true;
        int[] area = HoleFilling.componentAreas(on, 4, 4);
        assertEquals(3, area[0]);
        assertEquals(3, area[10]);
        assertEquals(0, area[1]);
    }
}
