package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The run-based labelling against a plain pixel flood fill, on random masks of several shapes and densities. */
class HoleFillingReferenceTest {
    @Test
    void componentAreasMatchAFloodFill() {
        Random r = new Random(11);
        int[][] shapes = {{1, 1}, {1, 9}, {9, 1}, {2, 2}, {7, 13}, {32, 32}, {40, 17}};
        for (int[] hw : shapes) {
            for (float density : new float[] {0f, 0.1f, 0.45f, 0.6f, 0.9f, 1f}) {
                boolean[] on = new boolean[hw[0] * hw[1]];
                for (int i = 0; i < on.length; i++) {
                    on[i] = r.nextFloat() < density;
                }
                assertArrayEquals(floodAreas(on, hw[0], hw[1]), HoleFilling.componentAreas(on, hw[0], hw[1]),
                        hw[0] + "x" + hw[1] + " at " + density);
            }
        }
    }

    @Test
    void fillMatchesTheRuleOnFloodFillAreas() {
        Random r = new Random(5);
        int n = 48;
        for (int trial = 0; trial < 40; trial++) {
            float[] m = new float[n * n];
            int cx = r.nextInt(n);
            int cy = r.nextInt(n);
            int rad = 3 + r.nextInt(20);
            for (int y = 0; y < n; y++) {
                for (int x = 0; x < n; x++) {
                    float base = Math.hypot(x - cx, y - cy) < rad ? 4f : -4f;
                    m[y * n + x] = r.nextFloat() < 0.08f ? -base : base;
                }
            }
            int maxArea = trial % 4 == 0 ? 0 : 1 + r.nextInt(20);
            checkFill(m, n, n, maxArea, "trial " + trial);
        }
        // noise (logits of exactly 0 are background), where filled holes join foreground regions, and sparse masks
        // of objects smaller than maxArea
        int[][] shapes = {{1, 1}, {1, 9}, {9, 1}, {7, 13}, {32, 32}, {40, 17}};
        for (int[] hw : shapes) {
            for (float density : new float[] {0.02f, 0.1f, 0.5f, 0.8f, 0.97f}) {
                for (int maxArea : new int[] {1, 2, 4, 16, 64}) {
                    float[] noise = new float[hw[0] * hw[1]];
                    for (int i = 0; i < noise.length; i++) {
                        float bg = r.nextInt(4) == 0 ? 0f : -r.nextFloat();
                        noise[i] = r.nextFloat() < density ? 1f + r.nextFloat() : bg;
                    }
                    checkFill(noise, hw[0], hw[1], maxArea, hw[0] + "x" + hw[1] + " at " + density + ", maxArea "
                            + maxArea);
                }
            }
        }
    }

    @Test
    void fillsAHoleOfAtMostMaxAreaAndRemovesSprinkles() {
        // a 3-pixel hole in a 5x5 block, and a lone foreground pixel away from it
        int h = 9;
        int w = 9;
        float[] m = new float[h * w];
        Arrays.fill(m, -1f);
        for (int y = 1; y <= 5; y++) {
            for (int x = 1; x <= 5; x++) {
                m[y * w + x] = 2f;
            }
        }
        m[3 * w + 2] = m[3 * w + 3] = m[3 * w + 4] = -2f;
        m[7 * w + 7] = 3f;
        float[] kept = HoleFilling.fill(m, h, w, 2);
        assertEquals(-2f, kept[3 * w + 3], "a hole larger than maxArea stays");
        assertEquals(-0.1f, kept[7 * w + 7], "a 1-pixel sprinkle goes");
        float[] filled = HoleFilling.fill(m, h, w, 3);
        assertEquals(0.1f, filled[3 * w + 3], "a hole of maxArea pixels is filled");
        assertEquals(2f, filled[1 * w + 1], "the object stays");
        float[] alone = new float[h * w];
        Arrays.fill(alone, -1f);
        alone[4 * w + 4] = alone[4 * w + 5] = alone[5 * w + 4] = 1f;
        assertArrayEquals(alone, HoleFilling.fill(alone, h, w, 16), "an object smaller than maxArea, but all there is");
        checkFill(m, h, w, 2, "hand-made, maxArea 2");
        checkFill(m, h, w, 3, "hand-made, maxArea 3");
    }

    /**
     * HoleFilling.fill against its rule, stated per pixel from flood-fill component areas: with maxArea > 0, a
     * background pixel (logit <= 0) whose region has at most maxArea pixels is a hole; the foreground after filling
     * is the input's foreground and the holes; a pixel of a foreground region (of that foreground) of at most
     * min(maxArea, foreground pixels / 2) pixels is a sprinkle. A sprinkle becomes -0.1, else a hole 0.1, else the
     * pixel keeps its logit. With maxArea <= 0 nothing changes.
     */
    private static void checkFill(float[] m, int h, int w, int maxArea, String label) {
        float[] got = HoleFilling.fill(m, h, w, maxArea);
        assertEquals(m.length, got.length, label);
        if (maxArea <= 0) {
            assertArrayEquals(m, got, label);
            return;
        }
        boolean[] bg = new boolean[m.length];
        for (int i = 0; i < m.length; i++) {
            bg[i] = m[i] <= 0;
        }
        int[] bgArea = floodAreas(bg, h, w);
        boolean[] hole = new boolean[m.length];
        boolean[] fg = new boolean[m.length];
        int fgPixels = 0;
        for (int i = 0; i < m.length; i++) {
            hole[i] = bg[i] && bgArea[i] <= maxArea;
            fg[i] = !bg[i] || hole[i];
            fgPixels += fg[i] ? 1 : 0;
        }
        int[] fgArea = floodAreas(fg, h, w);
        int bound = Math.min(maxArea, fgPixels / 2);
        for (int i = 0; i < m.length; i++) {
            boolean sprinkle = fg[i] && fgArea[i] <= bound;
            float want = sprinkle ? -0.1f : hole[i] ? 0.1f : m[i];
            assertEquals(want, got[i], label + ": pixel (" + i / w + ", " + i % w + ")");
        }
    }

    /** Component sizes by an 8-connected flood fill from each unlabelled pixel. */
    private static int[] floodAreas(boolean[] on, int h, int w) {
        int[] label = new int[on.length];
        int[] size = new int[on.length + 1];
        int next = 0;
        int[] stack = new int[on.length];
        for (int s = 0; s < on.length; s++) {
            if (!on[s] || label[s] != 0) {
                continue;
            }
            label[s] = ++next;
            int top = 0;
            stack[top++] = s;
            while (top > 0) {
                int p = stack[--top];
                size[next]++;
                for (int dy = -1; dy <= 1; dy++) {
                    for (int dx = -1; dx <= 1; dx++) {
                        int y = p / w + dy;
                        int x = p % w + dx;
                        if (y >= 0 && y < h && x >= 0 && x < w && on[y * w + x] && label[y * w + x] == 0) {
                            label[y * w + x] = next;
                            stack[top++] = y * w + x;
                        }
                    }
                }
            }
        }
        int[] area = new int[on.length];
        for (int i = 0; i < on.length; i++) {
            area[i] = on[i] ? size[label[i]] : 0;
        }
        return area;
    }
}
