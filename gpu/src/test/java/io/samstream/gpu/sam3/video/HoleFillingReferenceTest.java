package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

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
            assertArrayEquals(referenceFill(m, n, n, maxArea), HoleFilling.fill(m, n, n, maxArea), "trial " + trial);
        }
    }

    /** fill_holes_in_mask_scores, written plainly. */
    private static float[] referenceFill(float[] mask, int h, int w, int maxArea) {
        float[] out = mask.clone();
        if (maxArea <= 0) {
            return out;
        }
        boolean[] bg = new boolean[out.length];
        for (int i = 0; i < out.length; i++) {
            bg[i] = out[i] <= 0;
        }
        int[] bgArea = floodAreas(bg, h, w);
        for (int i = 0; i < out.length; i++) {
            if (bg[i] && bgArea[i] <= maxArea) {
                out[i] = 0.1f;
            }
        }
        boolean[] fg = new boolean[out.length];
        int total = 0;
        for (int i = 0; i < out.length; i++) {
            fg[i] = out[i] > 0;
            total += fg[i] ? 1 : 0;
        }
        int[] fgArea = floodAreas(fg, h, w);
        for (int i = 0; i < out.length; i++) {
            if (fg[i] && fgArea[i] <= Math.min(total / 2, maxArea)) {
                out[i] = -0.1f;
            }
        }
        return out;
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
