package io.samstream.stream.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.samstream.gpu.mask.CocoRle;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Sampling a COCO RLE mask onto a smaller grid gives what decoding it whole and sampling the pixels gives. */
class MaskSamplerTest {
    @Test
    void agreesWithTheFullDecodeSampledAtEachPixelsCentre() {
        SplittableRandom r = new SplittableRandom(7);
        int[][] sizes = {{96, 128, 48, 64}, {1080, 1920, 360, 640}, {37, 53, 11, 16}, {50, 50, 50, 50}, {5, 7, 1, 1}};
        for (int[] s : sizes) {
            int h = s[0];
            int w = s[1];
            for (int trial = 0; trial < 3; trial++) {
                boolean[] mask = blobs(r, h, w, trial);
                String counts = CocoRle.encode(mask, h, w);
                boolean[] expected = new boolean[s[2] * s[3]];
                for (int ty = 0; ty < s[2]; ty++) {
                    for (int tx = 0; tx < s[3]; tx++) {
                        expected[ty * s[3] + tx] = mask[MaskSampler.source(ty, s[2], h) * w + MaskSampler.source(tx, s[3], w)];
                    }
                }
                assertArrayEquals(expected, MaskSampler.sample(counts, h, w, s[2], s[3]), w + "x" + h + " trial " + trial);
            }
        }
    }

    @Test
    void aGridLargerThanTheFrameIsRefused() {
        String counts = CocoRle.encode(new boolean[20], 4, 5);
        assertThrows(IllegalArgumentException.class, () -> MaskSampler.sample(counts, 4, 5, 8, 10));
    }

    /** Rectangles and noise: runs crossing columns, whole columns, single pixels; trial 0 empty, 1 full. */
    private static boolean[] blobs(SplittableRandom r, int h, int w, int trial) {
        boolean[] m = new boolean[h * w];
        if (trial == 1) {
            java.util.Arrays.fill(m, true);
            return m;
        }
        if (trial == 0) {
            return m;
        }
        for (int b = 0; b < 6; b++) {
            int x0 = r.nextInt(w);
            int y0 = r.nextInt(h);
            int x1 = Math.min(w, x0 + 1 + r.nextInt(Math.max(1, w / 2)));
            int y1 = Math.min(h, y0 + 1 + r.nextInt(Math.max(1, h / 2)));
            for (int y = y0; y < y1; y++) {
                for (int x = x0; x < x1; x++) {
                    m[y * w + x] = true;
                }
            }
        }
        for (int i = 0; i < m.length / 50; i++) {
            m[r.nextInt(m.length)] ^= true;
        }
        return m;
    }
}
