package io.samstream.stream.http;

import io.samstream.gpu.mask.CocoRle;

/**
 * A mask record's COCO RLE mask sampled straight onto a smaller grid (a preview's), without decoding it at the
 * frame's full size: target pixel (tx, ty) takes the source pixel at its centre. Walks the runs (column-major, as COCO
 * writes them) and marks only the sampled columns: O(runs + sampled pixels) instead of O(frame pixels).
 */
final class MaskSampler {
    private MaskSampler() {}

    /**
     * @param counts the compressed counts string of an {@code height} x {@code width} mask
     * @return the mask on a {@code targetHeight} x {@code targetWidth} grid, row-major
     */
    static boolean[] sample(String counts, int height, int width, int targetHeight, int targetWidth) {
        if (targetWidth < 1 || targetHeight < 1 || targetWidth > width || targetHeight > height) {
            throw new IllegalArgumentException("a preview of " + targetWidth + "x" + targetHeight + " does not fit a "
                    + width + "x" + height + " frame");
        }
        int[] runs = CocoRle.fromCountsString(counts, height, width).counts();
        // The target column sampling each source column (-1: none), and the first target row at or below each source row.
        int[] columnTarget = new int[width];
        java.util.Arrays.fill(columnTarget, -1);
        for (int tx = 0; tx < targetWidth; tx++) {
            columnTarget[source(tx, targetWidth, width)] = tx;
        }
        int[] rowSource = new int[targetHeight];
        for (int ty = 0; ty < targetHeight; ty++) {
            rowSource[ty] = source(ty, targetHeight, height);
        }
        int[] firstTargetRow = new int[height + 1];
        for (int y = 0, ty = 0; y <= height; y++) {
            while (ty < targetHeight && rowSource[ty] < y) {
                ty++;
            }
            firstTargetRow[y] = ty;
        }
        boolean[] out = new boolean[targetHeight * targetWidth];
        long index = 0;
        for (int k = 0; k < runs.length; k++) {
            long end = index + runs[k];
            if ((k & 1) == 1 && runs[k] > 0) { // a run of ones: [index, end) in column-major order
                int firstColumn = (int) (index / height);
                int lastColumn = (int) ((end - 1) / height);
                for (int x = firstColumn; x <= lastColumn; x++) {
                    int tx = columnTarget[x];
                    if (tx < 0) {
                        continue;
                    }
                    long columnStart = (long) x * height;
                    int y0 = (int) (Math.max(index, columnStart) - columnStart);
                    int y1 = (int) (Math.min(end, columnStart + height) - columnStart);
                    for (int ty = firstTargetRow[y0]; ty < targetHeight && rowSource[ty] < y1; ty++) {
                        out[ty * targetWidth + tx] = true;
                    }
                }
            }
            index = end;
        }
        return out;
    }

    /** The source coordinate whose pixel target coordinate {@code t} shows: the one under its centre. */
    static int source(int t, int targetSize, int sourceSize) {
        return Math.min(sourceSize - 1, (int) ((t + 0.5) * sourceSize / targetSize));
    }
}
