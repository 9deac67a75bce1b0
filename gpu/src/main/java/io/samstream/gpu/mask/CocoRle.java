package io.samstream.gpu.mask;

import java.util.Arrays;

/**
 * A binary mask in COCO run-length encoding, as pycocotools ({@code maskApi.c}) writes and reads it, so a
 * Python consumer decodes our masks with {@code pycocotools.mask.decode({"size": [h, w], "counts": s})}.
 *
 * <p>The mask is scanned in column-major (Fortran) order; the counts alternate runs of 0s and 1s, always
 * starting with a run of 0s (of length 0 when the first pixel is set). The compressed string
 * ({@code rleToString}) writes each count, minus the count two places before it from the fourth count on,
 * as little-endian groups of 5 bits, 6 bits to a character ({@code '0' + bits}): bit 5 says another group
 * follows, and bit 4 of the last group is the sign.
 *
 * <p>Masks handed in and out of this class are row-major {@code boolean[h * w]}, as the rest of samstream
 * holds them; only the encoding is column-major.
 */
public final class CocoRle {
    private final int height;
    private final int width;
    private final int[] counts;

    private CocoRle(int height, int width, int[] counts) {
        this.height = height;
        this.width = width;
        this.counts = counts;
    }

    /** pycocotools' {@code rleEncode} of a row-major mask. */
    public static CocoRle ofMask(boolean[] maskRowMajor, int height, int width) {
        checkSize(height, width);
        if (maskRowMajor.length != height * width) {
            throw new IllegalArgumentException("mask of " + maskRowMajor.length + " pixels is not " + height + "x" + width);
        }
        int[] runs = new int[16];
        int n = 0;
        boolean previous = false;
        int run = 0;
        for (int x = 0; x < width; x++) {
            for (int i = x; i < maskRowMajor.length; i += width) {
                if (maskRowMajor[i] != previous) {
                    if (n == runs.length) {
                        runs = Arrays.copyOf(runs, n * 2);
                    }
                    runs[n++] = run;
                    run = 0;
                    previous = !previous;
                }
                run++;
            }
        }
        runs = Arrays.copyOf(runs, n + 1);
        runs[n] = run;
        return new CocoRle(height, width, runs);
    }

    /** Uncompressed counts, as in {@code {"size": [h, w], "counts": [...]}}; they must add up to h * w. */
    public static CocoRle ofCounts(int[] counts, int height, int width) {
        checkSize(height, width);
        long total = 0;
        for (int c : counts) {
            if (c < 0) {
                throw new IllegalArgumentException("negative run length " + c + " in RLE counts");
            }
            total += c;
        }
        if (total != (long) height * width) {
            throw new IllegalArgumentException("RLE counts cover " + total + " pixels, a " + height + "x" + width
                    + " mask has " + (long) height * width);
        }
        return new CocoRle(height, width, counts.clone());
    }

    /** pycocotools' {@code rleFrString}: parses a compressed counts string of an h x w mask. */
    public static CocoRle fromCountsString(String s, int height, int width) {
        int[] counts = new int[Math.max(1, s.length())];
        int m = 0;
        int p = 0;
        while (p < s.length()) {
            long x = 0;
            int k = 0;
            boolean more = true;
            while (more) {
                if (p >= s.length()) {
                    throw new IllegalArgumentException("RLE counts string ends inside a number: \"" + abbreviate(s) + "\"");
                }
                int c = s.charAt(p) - 48;
                if (c < 0 || c > 63) {
                    throw new IllegalArgumentException("invalid character '" + s.charAt(p) + "' at " + p
                            + " in RLE counts string");
                }
                if (k > 6) {
                    throw new IllegalArgumentException("run length too large at " + p + " in RLE counts string");
                }
                x |= (long) (c & 0x1f) << (5 * k);
                more = (c & 0x20) != 0;
                p++;
                k++;
                if (!more && (c & 0x10) != 0) {
                    x |= -1L << (5 * k); // sign-extend the last group
                }
            }
            if (m > 2) {
                x += counts[m - 2];
            }
            if (x < 0 || x > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("invalid run length " + x + " in RLE counts string");
            }
            counts[m++] = (int) x;
        }
        return ofCounts(Arrays.copyOf(counts, m), height, width);
    }

    /** The compressed counts string of a row-major mask ({@code mask.encode(np.asfortranarray(m))["counts"]}). */
    public static String encode(boolean[] maskRowMajor, int height, int width) {
        return ofMask(maskRowMajor, height, width).countsString();
    }

    /** The row-major mask of a compressed counts string ({@code mask.decode}). */
    public static boolean[] decode(String counts, int height, int width) {
        return fromCountsString(counts, height, width).toMask();
    }

    /** pycocotools' {@code rleToString}. */
    public String countsString() {
        StringBuilder sb = new StringBuilder(counts.length * 2);
        for (int i = 0; i < counts.length; i++) {
            long x = counts[i];
            if (i > 2) {
                x -= counts[i - 2];
            }
            boolean more = true;
            while (more) {
                int c = (int) (x & 0x1f);
                x >>= 5;
                more = (c & 0x10) != 0 ? x != -1 : x != 0;
                if (more) {
                    c |= 0x20;
                }
                sb.append((char) (c + 48));
            }
        }
        return sb.toString();
    }

    /** pycocotools' {@code rleDecode}, returned row-major. */
    public boolean[] toMask() {
        boolean[] mask = new boolean[height * width];
        boolean value = false;
        int pos = 0; // column-major position
        for (int run : counts) {
            if (value) {
                for (int end = pos + run; pos < end; pos++) {
                    int x = pos / height;
                    int y = pos - x * height;
                    mask[y * width + x] = true;
                }
            } else {
                pos += run;
            }
            value = !value;
        }
        return mask;
    }

    /** Number of set pixels ({@code rleArea}). */
    public long area() {
        long a = 0;
        for (int j = 1; j < counts.length; j += 2) {
            a += counts[j];
        }
        return a;
    }

    /**
     * {@code [x, y, w, h]} of the set pixels, as pycocotools' {@code toBbox} ({@code rleToBbox}); all zeros for
     * an empty mask.
     */
    public int[] boundingBox() {
        int m = counts.length / 2 * 2; // a trailing run of 0s says nothing about the box
        if (m == 0) {
            return new int[4];
        }
        long h = height;
        long xs = width;
        long ys = height;
        long xe = 0;
        long ye = 0;
        long cc = 0;
        long xp = 0;
        for (int j = 0; j < m; j++) {
            cc += counts[j];
            long t = cc - j % 2; // first set pixel of a run of 1s, or the last one
            long y = t % h;
            long x = (t - y) / h;
            if (j % 2 == 0) {
                xp = x;
            } else if (xp < x) {
                // The run wraps into a later column: it crosses every row.
                ys = 0;
                ye = h - 1;
            }
            xs = Math.min(xs, x);
            xe = Math.max(xe, x);
            ys = Math.min(ys, y);
            ye = Math.max(ye, y);
        }
        return new int[] {(int) xs, (int) ys, (int) (xe - xs + 1), (int) (ye - ys + 1)};
    }

    /**
     * {@code [x0, y0, x1, y1]} with exclusive right and bottom edges: {@code [x, y, x + w, y + h]} of
     * {@link #boundingBox()}, the box in pixel-edge coordinates. (segment-anything's
     * {@code batched_mask_to_box} gives inclusive x1, y1, one less.) All zeros for an empty mask.
     */
    public int[] boundingBoxCorners() {
        int[] b = boundingBox();
        return new int[] {b[0], b[1], b[0] + b[2], b[1] + b[3]};
    }

    public int height() {
        return height;
    }

    public int width() {
        return width;
    }

    /** The uncompressed counts (a copy). */
    public int[] counts() {
        return counts.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CocoRle r && r.height == height && r.width == width && Arrays.equals(r.counts, counts);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * height + width) + Arrays.hashCode(counts);
    }

    @Override
    public String toString() {
        return "CocoRle[" + height + "x" + width + ", counts=" + abbreviate(countsString()) + "]";
    }

    private static void checkSize(int height, int width) {
        if (height < 0 || width < 0 || (long) height * width > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("invalid mask size " + height + "x" + width);
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 37) + "...";
    }
}
