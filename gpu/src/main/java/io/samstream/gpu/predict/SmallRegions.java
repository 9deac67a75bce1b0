package io.samstream.gpu.predict;

import java.util.Arrays;

/**
 * segment-anything's {@code remove_small_regions}: fills holes and removes islands of a binary mask that
 * are smaller than an area, with 8-connectivity as its {@code cv2.connectedComponentsWithStats(m, 8)}.
 * A hole is any connected region of unset pixels (one touching the image border too); when every island
 * is small, the largest one stays (the first in raster order on a tie).
 */
final class SmallRegions {
    private SmallRegions() {}

    /** A mask after clean-up, and whether anything was small enough to matter (then it may have changed). */
    record Result(boolean[] mask, boolean changed) {}

    /** Small holes filled first, then small islands removed, as the reference's post-processing. */
    static Result clean(boolean[] mask, int width, int height, int minArea) {
        Result holes = apply(mask, width, height, minArea, true);
        Result islands = apply(holes.mask(), width, height, minArea, false);
        return new Result(islands.mask(), holes.changed() || islands.changed());
    }

    /**
     * One mode of {@code remove_small_regions}: the regions are the components of the set pixels
     * (islands) or of the unset pixels (holes); those under {@code minArea} pixels are flipped.
     */
    static Result apply(boolean[] mask, int width, int height, int minArea, boolean holes) {
        if (mask.length != (long) width * height) {
            throw new IllegalArgumentException(mask.length + " pixels are not a " + width + "x" + height + " mask");
        }
        Components c = Components.of(mask, width, height, !holes);
        boolean anySmall = false;
        for (int k = 1; k <= c.count; k++) {
            anySmall |= c.sizes[k] < minArea;
        }
        if (!anySmall) {
            return new Result(mask, false);
        }
        boolean[] keepLabel = new boolean[c.count + 1];
        if (holes) {
            keepLabel[0] = true; // label 0: the mask itself; small holes join it
            for (int k = 1; k <= c.count; k++) {
                keepLabel[k] = c.sizes[k] < minArea;
            }
        } else {
            boolean any = false;
            for (int k = 1; k <= c.count; k++) {
                keepLabel[k] = c.sizes[k] >= minArea;
                any |= keepLabel[k];
            }
            if (!any) {
                int largest = 1;
                for (int k = 2; k <= c.count; k++) {
                    if (c.sizes[k] > c.sizes[largest]) {
                        largest = k;
                    }
                }
                keepLabel[largest] = true;
            }
        }
        boolean[] out = new boolean[mask.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = keepLabel[c.labels[i]];
        }
        return new Result(out, true);
    }

    /** 8-connected components of the pixels equal to {@code value}, labelled 1.. in raster order; others 0. */
    private static final class Components {
        final int[] labels;
        final int[] sizes; // sizes[k] for label k >= 1
        final int count;

        private Components(int[] labels, int[] sizes, int count) {
            this.labels = labels;
            this.sizes = sizes;
            this.count = count;
        }

        static Components of(boolean[] mask, int width, int height, boolean value) {
            int[] labels = new int[mask.length];
            int[] sizes = new int[16];
            int[] stack = new int[64];
            int count = 0;
            for (int start = 0; start < mask.length; start++) {
                if (mask[start] != value || labels[start] != 0) {
                    continue;
                }
                int label = ++count;
                if (label == sizes.length) {
                    sizes = Arrays.copyOf(sizes, sizes.length * 2);
                }
                int top = 0;
                stack[top++] = start;
                labels[start] = label;
                int size = 0;
                while (top > 0) {
                    int p = stack[--top];
                    size++;
                    int px = p % width;
                    int py = p / width;
                    for (int dy = -1; dy <= 1; dy++) {
                        int y = py + dy;
                        if (y < 0 || y >= height) {
                            continue;
                        }
                        for (int dx = -1; dx <= 1; dx++) {
                            int x = px + dx;
                            if (x < 0 || x >= width) {
                                continue;
                            }
                            int q = y * width + x;
                            if (mask[q] == value && labels[q] == 0) {
                                labels[q] = label;
                                if (top == stack.length) {
                                    stack = Arrays.copyOf(stack, stack.length * 2);
                                }
                                stack[top++] = q;
                            }
                        }
                    }
                }
                sizes[label] = size;
            }
            return new Components(labels, sizes, count);
        }
    }
}
