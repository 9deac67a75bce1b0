package io.samstream.gpu.cuda.sam3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** The mask head's host side, no GPU needed. */
class CudaSam3MaskHeadTest {
    /**
     * The logits back query by query: out[k][px] = byPixel[px][k], at sizes that end mid-block, and one large enough
     * to be turned on several threads, ending mid-task.
     */
    @Test
    void logitsComeBackQueryByQuery() {
        Random rnd = new Random(5);
        for (int[] c : new int[][] {{1, 8, 1}, {63, 8, 5}, {64, 8, 8}, {1000, 16, 9}, {82944 / 16, 152, 150}, {10037, 152, 150}}) {
            int count = c[0], nPad = c[1], n = c[2];
            float[] byPixel = new float[count * nPad];
            for (int i = 0; i < byPixel.length; i++) {
                byPixel[i] = rnd.nextFloat();
            }
            float[] want = new float[n * count];
            for (int px = 0; px < count; px++) {
                for (int k = 0; k < n; k++) {
                    want[k * count + px] = byPixel[px * nPad + k];
                }
            }
            assertArrayEquals(want, CudaSam3MaskHead.byQuery(byPixel, count, nPad, n), count + " x " + nPad);
        }
    }
}
