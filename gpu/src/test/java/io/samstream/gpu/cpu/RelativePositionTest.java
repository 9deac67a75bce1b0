package io.samstream.gpu.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

class RelativePositionTest {
    @Test
    void equalSizesIndexByCoordinateDifference() {
        int[][] idx = RelativePosition.relativeIndex(5, 5);
        for (int i = 0; i < 5; i++) {
            for (int j = 0; j < 5; j++) {
                assertEquals(i - j + 4, idx[i][j]);
            }
        }
    }

    @Test
    void differentSizesStretchTheShorterSide() {
        // q=2, k=4: q coords scaled by 2, offset (k-1) = 3.
        int[][] idx = RelativePosition.relativeIndex(2, 4);
        assertArrayEquals(new int[] {3, 2, 1, 0}, idx[0]);
        assertArrayEquals(new int[] {5, 4, 3, 2}, idx[1]);
        // q=4, k=2: k coords scaled by 2, offset (k-1)*2 = 2.
        int[][] back = RelativePosition.relativeIndex(4, 2);
        assertArrayEquals(new int[] {2, 0}, back[0]);
        assertArrayEquals(new int[] {5, 3}, back[3]);
        // q=3, k=7: non-integer scale 7/3, truncated like .long()
        int[][] odd = RelativePosition.relativeIndex(3, 7);
        float s = (float) (7.0 / 3);
        assertEquals(10, odd[2][0]); // 2 * 7/3 + 6 = 10.67
        assertEquals(2, odd[1][6]); // 7/3 - 6 + 6 = 2.33
        assertEquals((int) ((2 * s - 0f) + 6f), odd[2][0]);
    }

    @Test
    void linearResizeMatchesTorchInterpolate() {
        // F.interpolate(torch.tensor([[[0., 1., 2.]]]), size=5, mode="linear") = [0, .4, 1, 1.6, 2]
        assertArrayEquals(new float[] {0f, 0.4f, 1f, 1.6f, 2f},
                RelativePosition.resizeLinear(new float[] {0, 1, 2}, 3, 1, 5), 1e-6f);
        // size 5 -> 3: [1/3, 2, 11/3]
        assertArrayEquals(new float[] {1f / 3, 2f, 11f / 3},
                RelativePosition.resizeLinear(new float[] {0, 1, 2, 3, 4}, 5, 1, 3), 1e-6f);
        // Each column (channel) is resized on its own: table [3, 2] row-major.
        float[] table = {0, 10, 1, 20, 2, 30};
        float[] r = RelativePosition.resizeLinear(table, 3, 2, 5);
        assertArrayEquals(new float[] {0, 10, 0.4f, 14, 1, 20, 1.6f, 26, 2, 30}, r, 1e-5f);
    }

    @Test
    void storedTableOfTheRightLengthIsUsedAsIs() {
        float[] table = new float[7 * 2];
        for (int i = 0; i < table.length; i++) {
            table[i] = i;
        }
        RelativePosition rp = RelativePosition.of(table, 7, 2, 4, 4);
        assertArrayEquals(new float[] {6, 7}, rp.row(0, 0)); // index 3
        assertArrayEquals(new float[] {12, 13}, rp.row(3, 0)); // index 6
        assertArrayEquals(new float[] {0, 1}, rp.row(0, 3)); // index 0
        RelativePosition resized = RelativePosition.of(new float[] {0, 1, 2}, 3, 1, 3, 3);
        // the 3-row table is resized to 5 rows [0, .4, 1, 1.6, 2]; (2, 0) -> row 4, (2, 1) -> row 3
        assertEquals(2f, resized.row(2, 0)[0], 1e-6f);
        assertEquals(1.6f, resized.row(2, 1)[0], 1e-6f);
        assertSame(resized.row(0, 0), resized.row(1, 1));
    }
}
