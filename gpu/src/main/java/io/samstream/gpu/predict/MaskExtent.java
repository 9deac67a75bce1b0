package io.samstream.gpu.predict;

import io.samstream.gpu.image.MaskPostprocessor;

/** Where a mask's pixels are: their count and the first and last set column and row. */
record MaskExtent(long area, int minX, int minY, int maxX, int maxY) {

    /** The extent of logits thresholded at {@link MaskPostprocessor#MASK_THRESHOLD} (no boolean plane). */
    static MaskExtent ofLogits(float[] logits, int width, int height) {
        check(logits.length, width, height);
        Builder b = new Builder(width, height);
        for (int y = 0; y < height; y++) {
            int row = y * width;
            for (int x = 0; x < width; x++) {
                if (logits[row + x] > MaskPostprocessor.MASK_THRESHOLD) {
                    b.add(x, y);
                }
            }
        }
        return b.build();
    }

    static MaskExtent ofMask(boolean[] mask, int width, int height) {
        check(mask.length, width, height);
        Builder b = new Builder(width, height);
        for (int y = 0; y < height; y++) {
            int row = y * width;
            for (int x = 0; x < width; x++) {
                if (mask[row + x]) {
                    b.add(x, y);
                }
            }
        }
        return b.build();
    }

    /** segment-anything's {@code batched_mask_to_box}: the last set column and row are x1, y1; zeros when empty. */
    double[] inclusiveBox() {
        return new double[] {minX, minY, maxX, maxY};
    }

    /** Pixel edges: x1, y1 one past the last set column and row (all zeros when empty). */
    double[] box() {
        return area == 0 ? new double[4] : new double[] {minX, minY, maxX + 1, maxY + 1};
    }

    private static void check(int length, int width, int height) {
        if (length != (long) width * height) {
            throw new IllegalArgumentException(length + " values are not a " + width + "x" + height + " plane");
        }
    }

    private static final class Builder {
        long area;
        int minX;
        int minY;
        int maxX = -1;
        int maxY = -1;

        Builder(int width, int height) {
            minX = width;
            minY = height;
        }

        void add(int x, int y) {
            area++;
            minX = Math.min(minX, x);
            maxX = Math.max(maxX, x);
            minY = Math.min(minY, y);
            maxY = Math.max(maxY, y);
        }

        MaskExtent build() {
            return area == 0 ? new MaskExtent(0, 0, 0, 0, 0) : new MaskExtent(area, minX, minY, maxX, maxY);
        }
    }
}
