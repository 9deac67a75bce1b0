package io.samstream.gpu.cuda.sam3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.samstream.gpu.cuda.Bf16;
import java.nio.ShortBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The mask head's host side, no GPU needed. */
class CudaSam3MaskHeadTest {
    /**
     * The logits back query by query from bf16: out[k][px] = float(byPixel[px][k]), at sizes that end mid-block, one
     * large enough to be turned on several threads and ending mid-task, and each in chunks of whole pixels as the
     * staging buffer brings them (the last chunk shorter).
     */
    @Test
    void logitsComeBackQueryByQuery() {
        Random rnd = new Random(5);
        for (int[] c : new int[][] {{1, 8, 1, 1}, {63, 8, 5, 63}, {64, 8, 8, 10}, {1000, 16, 9, 333},
                {82944 / 16, 152, 150, 5184}, {10037, 152, 150, 10037}, {10037, 152, 150, 4000}}) {
            int count = c[0], nPad = c[1], n = c[2], chunk = c[3];
            short[] byPixel = new short[count * nPad];
            for (int i = 0; i < byPixel.length; i++) {
                byPixel[i] = Bf16.fromFloat((float) rnd.nextGaussian());
            }
            float[] want = new float[n * count];
            for (int px = 0; px < count; px++) {
                for (int k = 0; k < n; k++) {
                    want[k * count + px] = Bf16.toFloat(byPixel[px * nPad + k]);
                }
            }
            float[] out = new float[n * count];
            for (int p0 = 0; p0 < count; p0 += chunk) {
                int m = Math.min(chunk, count - p0);
                ShortBuffer staging = ShortBuffer.wrap(byPixel, p0 * nPad, m * nPad).slice();
                CudaSam3MaskHead.byQuery(staging, m, nPad, n, out, count, p0);
            }
            assertArrayEquals(want, out, count + " x " + nPad + " in chunks of " + chunk);
        }
    }
}
