package io.samstream.gpu.sam3.video;

import java.util.Arrays;

/**
 * {@code fill_holes_in_mask_scores} (SAM 3's video post-processing, {@code fill_hole_area} 16): in a map of mask
 * logits, background regions (logit <= 0) of at most {@code maxArea} pixels become 0.1 (holes filled), then
 * foreground regions (logit > 0) of at most min(maxArea, foreground area / 2) pixels become -0.1 (sprinkles removed;
 * an object smaller than that bound is kept). Regions are 8-connected, as skimage's {@code label} and Meta's GPU
 * kernels count them.
 */
final class HoleFilling {
    private HoleFilling() {}

    /** A filled copy of mask logits [h, w]; unchanged when maxArea <= 0. */
    static float[] fill(float[] mask, int h, int w, int maxArea) {
        if (maxArea <= 0) {
            return mask.clone();
        }
        float[] out = mask.clone();
        boolean[] bg = new boolean[out.length];
        for (int i = 0; i < out.length; i++) {
            bg[i] = out[i] <= 0;
        }
        int[] bgArea = componentAreas(bg, h, w);
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
        int bound = Math.min(total / 2, maxArea);
        int[] fgArea = componentAreas(fg, h, w);
        for (int i = 0; i < out.length; i++) {
            if (fg[i] && fgArea[i] <= bound) {
                out[i] = -0.1f;
            }
        }
        return out;
    }

    /**
     * Per pixel of {@code on}, the size of its 8-connected component; 0 elsewhere. Labels runs, not pixels: each
     * row's runs of set pixels join the runs of the row above that touch them (diagonals included) in a union-find,
     * so each pixel is read once and written once.
     */
    static int[] componentAreas(boolean[] on, int h, int w) {
        Runs runs = new Runs(h * ((w + 1) / 2));
        int above = 0;
        for (int y = 0; y < h; y++) {
            int first = runs.count;
            int j = above;
            for (int x = 0; x < w; ) {
                if (!on[y * w + x]) {
                    x++;
                    continue;
                }
                int s = x;
                while (x < w && on[y * w + x]) {
                    x++;
                }
                int r = runs.add(y, s, x);
                while (j < first && runs.end[j] < s) {
                    j++;
                }
                for (int k = j; k < first && runs.start[k] <= x; k++) {
                    runs.union(r, k);
                }
            }
            above = first;
        }
        return runs.areas(on.length, w);
    }

    /** Runs of set pixels [start, end) on a row, in scan order, with a union-find over them. */
    private static final class Runs {
        final int[] row;
        final int[] start;
        final int[] end;
        final int[] parent;
        int count;

        Runs(int capacity) {
            row = new int[capacity];
            start = new int[capacity];
            end = new int[capacity];
            parent = new int[capacity];
        }

        int add(int y, int s, int e) {
            row[count] = y;
            start[count] = s;
            end[count] = e;
            parent[count] = count;
            return count++;
        }

        int find(int r) {
            while (parent[r] != r) {
                parent[r] = parent[parent[r]];
                r = parent[r];
            }
            return r;
        }

        void union(int a, int b) {
            int ra = find(a);
            int rb = find(b);
            if (ra != rb) {
                parent[Math.max(ra, rb)] = Math.min(ra, rb);
            }
        }

        /** Every run's pixels set to the total length of the runs of its component. */
        int[] areas(int pixels, int w) {
            int[] size = new int[count];
            for (int r = 0; r < count; r++) {
                size[find(r)] += end[r] - start[r];
            }
            int[] area = new int[pixels];
            for (int r = 0; r < count; r++) {
                Arrays.fill(area, row[r] * w + start[r], row[r] * w + end[r], size[find(r)]);
            }
            return area;
        }
    }
}
