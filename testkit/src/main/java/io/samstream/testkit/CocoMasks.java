package io.samstream.testkit;

import java.util.Arrays;

/**
 * COCO run-length masks as pycocotools writes them ({@code mask.encode}, the {@code counts} string of a
 * masks record), decoded for assertions. This is a reading of the format of its own, independent of the
 * encoder under test (gpu's {@code CocoRle}): an assertion that decoded with the encoder's code would
 * pass when both were wrong the same way.
 *
 * <p>The format: run lengths over the pixels in column-major order, the first run of 0s (possibly
 * empty), then 1s, 0s, ... Each count is written in groups of 5 bits, least significant first, each group
 * as one character {@code '0' + bits}, where bit 0x20 says another group follows and bit 0x10 of the last
 * group is the sign. From the third count on, the string holds the difference to the count two before.
 */
public final class CocoMasks {
    private CocoMasks() {}

    /** The run lengths that {@code counts} writes. */
    public static long[] runs(String counts) {
        long[] out = new long[counts.length()];
        int n = 0;
        int p = 0;
        while (p < counts.length()) {
            long x = 0;
            int shift = 0;
            boolean more = true;
            while (more) {
                if (p >= counts.length()) {
                    throw new IllegalArgumentException("RLE counts end inside a number: \"" + counts + "\"");
                }
                int c = counts.charAt(p) - '0';
                if (c < 0 || c > 63) {
                    throw new IllegalArgumentException("RLE counts: character '" + counts.charAt(p) + "' at " + p
                            + " is not one of '0'..'o'");
                }
                if (shift > 55) {
                    throw new IllegalArgumentException("RLE counts: a number longer than 64 bits at " + p);
                }
                x |= (long) (c & 0x1f) << shift;
                shift += 5;
                more = (c & 0x20) != 0;
                if (!more && (c & 0x10) != 0) {
                    x |= -1L << shift; // negative: sign-extend
                }
                p++;
            }
            if (n > 2) {
                x += out[n - 2];
            }
            if (x < 0) {
                throw new IllegalArgumentException("RLE counts: run " + n + " is negative (" + x + ")");
            }
            out[n++] = x;
        }
        return Arrays.copyOf(out, n);
    }

    /**
     * The mask that {@code counts} writes for a {@code height} x {@code width} image, row-major ({@code
     * mask[y * width + x]}).
     *
     * @throws IllegalArgumentException when the string is malformed or its runs do not cover the image exactly
     */
    public static boolean[] decode(String counts, int height, int width) {
        if (height < 0 || width < 0) {
            throw new IllegalArgumentException("RLE size " + height + "x" + width + " is negative");
        }
        long pixels = (long) height * width;
        long[] runs = runs(counts);
        long total = 0;
        for (int i = 0; i < runs.length && total <= pixels; i++) {
            total += runs[i]; // stops past the image: no overflow however large a run
        }
        if (total != pixels) {
            throw new IllegalArgumentException("RLE counts \"" + counts + "\" cover "
                    + (total > pixels ? "more than " + pixels : String.valueOf(total)) + " pixels, a " + height + "x"
                    + width + " mask has " + pixels);
        }
        boolean[] mask = new boolean[(int) pixels];
        long t = 0; // column-major pixel index
        for (int i = 0; i < runs.length; i++) {
            if (i % 2 == 1) {
                for (long k = t; k < t + runs[i]; k++) {
                    int y = (int) (k % height);
                    int x = (int) (k / height);
                    mask[y * width + x] = true;
                }
            }
            t += runs[i];
        }
        return mask;
    }

    /** The set pixels of a mask. */
    public static long area(boolean[] mask) {
        long a = 0;
        for (boolean b : mask) {
            a += b ? 1 : 0;
        }
        return a;
    }

    /**
     * {@code [x0, y0, x1, y1]} of the set pixels of a row-major mask, right and bottom edges exclusive (the
     * masks record's {@code box}); all zeros for an empty mask.
     */
    public static int[] box(boolean[] mask, int height, int width) {
        if (mask.length != height * width) {
            throw new IllegalArgumentException("a " + height + "x" + width + " mask has " + height * width
                    + " pixels, got " + mask.length);
        }
        int x0 = width;
        int y0 = height;
        int x1 = 0;
        int y1 = 0;
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                if (mask[y * width + x]) {
                    x0 = Math.min(x0, x);
                    y0 = Math.min(y0, y);
                    x1 = Math.max(x1, x + 1);
                    y1 = Math.max(y1, y + 1);
                }
            }
        }
        return x1 == 0 ? new int[4] : new int[] {x0, y0, x1, y1};
    }

    /** Intersection over union of two masks of one size; 1 when both are empty. */
    public static double iou(boolean[] a, boolean[] b) {
        if (a.length != b.length) {
            throw new IllegalArgumentException("masks of " + a.length + " and " + b.length + " pixels");
        }
        long inter = 0;
        long union = 0;
        for (int i = 0; i < a.length; i++) {
            inter += a[i] && b[i] ? 1 : 0;
            union += a[i] || b[i] ? 1 : 0;
        }
        return union == 0 ? 1 : (double) inter / union;
    }
}
