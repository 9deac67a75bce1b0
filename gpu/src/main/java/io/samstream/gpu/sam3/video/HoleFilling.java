package io.samstream.gpu.sam3.video;

import java.util.ArrayDeque;

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

    /** Per pixel of {@code on}, the size of its 8-connected component; 0 elsewhere. */
    static int[] componentAreas(boolean[] on, int h, int w) {
        int[] label = new int[on.length];
        int[] area = new int[on.length];
        int next = 0;
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        java.util.List<Integer> members = new java.util.ArrayList<>();
        for (int start = 0; start < on.length; start++) {
            if (!on[start] || label[start] != 0) {
                continue;
            }
            next++;
            label[start] = next;
            queue.add(start);
            members.clear();
            while (!queue.isEmpty()) {
                int p = queue.poll();
                members.add(p);
                int y = p / w;
                int x = p % w;
                for (int dy = -1; dy <= 1; dy++) {
                    for (int dx = -1; dx <= 1; dx++) {
                        int ny = y + dy;
                        int nx = x + dx;
                        if (ny < 0 || ny >= h || nx < 0 || nx >= w) {
                            continue;
                        }
                        int q = ny * w + nx;
                        if (on[q] && label[q] == 0) {
                            label[q] = next;
                            queue.add(q);
                        }
                    }
                }
            }
            for (int p : members) {
                area[p] = members.size();
            }
        }
        return area;
    }
}
