package io.samstream.gpu.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class WindowGridTest {
    @Test
    void windowsAreNumberedRowByRowWithPaddingAtBottomRight() {
        // 5 rows x 4 columns, windows of 3: padded to 6x6, 2x2 windows.
        WindowGrid g = WindowGrid.windowed(5, 4, 3);
        assertEquals(4, g.windowCount());
        assertEquals(6, g.paddedHeight());
        assertEquals(6, g.paddedWidth());
        assertEquals(0, g.tokenAt(0, 0));
        assertEquals(4 + 2, g.tokenAt(0, 5)); // window 0, row 1, col 2 -> (1, 2)
        assertEquals(3, g.tokenAt(1, 0)); // window 1 starts at (0, 3)
        assertEquals(-1, g.tokenAt(1, 1)); // (0, 4) is padding
        assertEquals(3 * 4, g.tokenAt(2, 0)); // window 2 starts at (3, 0)
        assertEquals(4 * 4 + 2, g.tokenAt(2, 5)); // (4, 2)
        assertEquals(-1, g.tokenAt(2, 6)); // (5, 0) is padding
        assertEquals(4 * 4 + 3, g.tokenAt(3, 3)); // (4, 3)
    }

    @Test
    void partitionPadsWithZerosAndUnpartitionRestores() {
        int h = 5;
        int w = 7;
        int c = 2;
        float[] x = new float[h * w * c];
        for (int i = 0; i < x.length; i++) {
            x[i] = i + 1;
        }
        WindowGrid g = WindowGrid.windowed(h, w, 3);
        float[] windows = g.partition(x, c);
        assertEquals(g.windowCount() * 9 * c, windows.length);
        // Compare with the reference's definition: pad to [6, 9, c], view [2, 3, 3, 3, c], permute (0, 2, 1, 3).
        int hp = 6;
        int wp = 9;
        float[] padded = new float[hp * wp * c];
        for (int y = 0; y < h; y++) {
            System.arraycopy(x, y * w * c, padded, y * wp * c, w * c);
        }
        int idx = 0;
        for (int wy = 0; wy < 2; wy++) {
            for (int wx = 0; wx < 3; wx++) {
                for (int y = 0; y < 3; y++) {
                    for (int xx = 0; xx < 3; xx++) {
                        for (int ch = 0; ch < c; ch++) {
                            assertEquals(padded[((wy * 3 + y) * wp + wx * 3 + xx) * c + ch], windows[idx++]);
                        }
                    }
                }
            }
        }
        assertArrayEquals(x, g.unpartition(windows, c));
    }

    @Test
    void globalGridIsOneWindowWithoutPadding() {
        WindowGrid g = WindowGrid.global(4, 4);
        assertEquals(1, g.windowCount());
        for (int i = 0; i < 16; i++) {
            assertEquals(i, g.tokenAt(0, i));
        }
    }
}
