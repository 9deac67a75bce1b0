package io.samstream.gpu.mask;

import java.util.Arrays;

/**
 * Everything the engine keeps of one upscaled mask, without the logits: the binary mask (logit above 0)
 * at the original frame size, bit-packed in column-major order (the order of COCO RLE), its area and
 * bounding box, and SAM's stability score.
 *
 * <p>Bit {@code p} (bit {@code p & 63} of word {@code p >>> 6}) is pixel {@code (x, y) = (p / height, p % height)};
 * bits past {@code height * width} are 0. The stability score is SAM's {@code calculate_stability_score}:
 * pixels with logit above {@code +}{@link #STABILITY_OFFSET} over pixels above {@code -}{@link #STABILITY_OFFSET},
 * as {@code (float) (inner / (double) outer)}, and 0 when both are empty (where SAM divides by zero), so
 * records stay valid JSON.
 *
 * <p>Made by {@code SamBackend.postprocessMasks}: on the CPU by {@code MaskPostprocessor.summarize}, on the
 * GPU by the CUDA backend; both give the same values.
 */
public final class MaskSummary {
    /** SAM's {@code stability_score_offset}: the mask thresholded at +1 and at -1. */
    public static final float STABILITY_OFFSET = 1.0f;

    private final int height;
    private final int width;
    private final long[] bits;
    private final long area;
    private final int[] box;
    private final long stableCount;
    private final long looseCount;

    /**
     * @param bits        column-major mask bits (kept, not copied), at least {@code ceil(height * width / 64)} words
     * @param area        number of set pixels
     * @param box         {@code [x0, y0, x1, y1]} of the set pixels, right and bottom exclusive; zeros when empty
     * @param stableCount pixels with logit above {@code +STABILITY_OFFSET}
     * @param looseCount  pixels with logit above {@code -STABILITY_OFFSET}
     */
    public MaskSummary(int height, int width, long[] bits, long area, int[] box, long stableCount, long looseCount) {
        if (height <= 0 || width <= 0) {
            throw new IllegalArgumentException("mask size must be positive, got " + height + "x" + width);
        }
        long pixels = (long) height * width;
        if (bits.length < (pixels + 63) >>> 6) {
            throw new IllegalArgumentException(bits.length + " words cannot hold a " + height + "x" + width + " mask");
        }
        if (box.length != 4) {
            throw new IllegalArgumentException("box must be [x0, y0, x1, y1], got " + box.length + " values");
        }
        if (area < 0 || area > pixels || stableCount < 0 || looseCount < stableCount || looseCount > pixels) {
            throw new IllegalArgumentException("inconsistent counts for a " + height + "x" + width + " mask: area "
                    + area + ", above +1: " + stableCount + ", above -1: " + looseCount);
        }
        this.height = height;
        this.width = width;
        this.bits = bits;
        this.area = area;
        this.box = box.clone();
        this.stableCount = stableCount;
        this.looseCount = looseCount;
    }

    /**
     * The summary of a mask given as logits at its full size ({@code h x w}, row-major; set where above 0): what
     * a model that upscales its masks itself (SAM 2.1's video tracker) hands over. SAM's masks, upscaled from their
     * low-resolution logits, are summarized as they are upscaled ({@code MaskPostprocessor}).
     */
    public static MaskSummary of(float[] logits, int h, int w) {
        if (logits.length != (long) h * w) {
            throw new IllegalArgumentException(logits.length + " logits do not make a " + h + "x" + w + " mask");
        }
        Columns c = new Columns(h, w);
        float[] column = new float[h];
        for (int x = 0; x < w; x++) {
            for (int y = 0; y < h; y++) {
                column[y] = logits[y * w + x];
            }
            c.add(column);
        }
        return c.summary();
    }

    /**
     * A summary made from a mask's logits a column at a time, left to right, so that a caller that computes them
     * (resizing, say) needs no {@code h x w} map: the same summary as {@link #of} on the same values.
     */
    public static final class Columns {
        private final int height;
        private final int width;
        private final long[] bits;
        /** Columns added so far. */
        private int x;
        private long area;
        private long stable;
        private long loose;
        private int x0;
        private int y0;
        private int x1;
        private int y1;
        /** The column being added: its counts and first and last set row so far, and room for its blended rows. */
        private long colStable;
        private long colLoose;
        private long colSet;
        private int colFirst;
        private int colLast;
        private final float[] scratch;

        public Columns(int h, int w) {
            if (h <= 0 || w <= 0) {
                throw new IllegalArgumentException("mask size must be positive, got " + h + "x" + w);
            }
            height = h;
            width = w;
            bits = new long[(int) (((long) h * w + 63) >>> 6)];
            scratch = new float[h];
            x0 = w;
            y0 = h;
        }

        /** The next column's logits, top to bottom (its first {@code h} values). */
        public void add(float[] column) {
            beginColumn();
            values(column, 0, height);
            endColumn();
        }

        /**
         * The next column as the vertical pass of a bilinear resize makes it: row y is {@code hy[y] * src[a] +
         * ly[y] * src[b]}, in float, for the run k holding y (rows {@code from[k]} to {@code from[k + 1] - 1} blend
         * the same two values {@code a = lo[k]}, {@code b = hi[k]}). The bits and counts are those of {@link
         * #add(float[])} of those rows, but a run whose two values lie, with a margin for the blend's rounding, on one
         * side of each threshold (0 and +-{@link #STABILITY_OFFSET}) is taken whole without blending its rows: far
         * from a mask's edge nearly every run is.
         */
        public void addBlended(float[] src, int[] from, int[] lo, int[] hi, float[] hy, float[] ly) {
            if (from[from.length - 1] != height || from[0] != 0) {
                throw new IllegalArgumentException("runs cover rows " + from[0] + ".." + from[from.length - 1]
                        + " of a column of " + height);
            }
            beginColumn();
            // Consecutive whole runs on the same sides of the thresholds are taken as one.
            int runFrom = 0;
            float runValue = 0f;
            int runSides = -1;
            for (int k = 0; k + 1 < from.length; k++) {
                int r0 = from[k];
                int r1 = from[k + 1];
                float c0 = src[lo[k]];
                float c1 = src[hi[k]];
                // A blend of c0 and c1 lies within [min, max] widened by its rounding (a few ulps of the larger).
                float margin = 1e-6f * Math.max(Math.abs(c0), Math.abs(c1)) + 1e-30f;
                float low = Math.min(c0, c1) - margin;
                if (uniform(low, Math.max(c0, c1) + margin)) {
                    int sides = sides(low);
                    if (sides != runSides) {
                        if (runSides >= 0) {
                            run(runFrom, r0, runValue);
                        }
                        runFrom = r0;
                        runValue = low;
                        runSides = sides;
                    }
                    continue;
                }
                if (runSides >= 0) {
                    run(runFrom, r0, runValue);
                    runSides = -1;
                }
                for (int y = r0; y < r1; y++) {
                    scratch[y] = hy[y] * c0 + ly[y] * c1;
                }
                values(scratch, r0, r1);
            }
            if (runSides >= 0) {
                run(runFrom, height, runValue);
            }
            endColumn();
        }

        /**
         * The next column, every value of which is on the side of each threshold that {@code v} is ({@link #uniform}).
         */
        public void addUniform(float v) {
            beginColumn();
            run(0, height, v);
            endColumn();
        }

        /**
         * Whether every value in [low, high] is on one side of each threshold (0 and +-{@link #STABILITY_OFFSET}), so
         * that all of them give the same bits and counts as {@code low}.
         */
        public static boolean uniform(float low, float high) {
            return sideOf(low, high, 0f) && sideOf(low, high, STABILITY_OFFSET) && sideOf(low, high, -STABILITY_OFFSET);
        }

        /** Which side of each threshold {@code v} is on, as bits (+1, 0, -1). */
        private static int sides(float v) {
            return (v > STABILITY_OFFSET ? 4 : 0) | (v > 0 ? 2 : 0) | (v > -STABILITY_OFFSET ? 1 : 0);
        }

        private void beginColumn() {
            if (x == width) {
                throw new IllegalStateException("all " + width + " columns are in");
            }
            colStable = 0;
            colLoose = 0;
            colSet = 0;
            colFirst = -1;
            colLast = -1;
        }

        /** Rows {@code from..to-1} of the column with the logits {@code v[from..to-1]}: the thresholding rule. */
        private void values(float[] v, int from, int to) {
            long[] b = bits;
            long p = (long) x * height + from;
            long stableHere = 0;
            long looseHere = 0;
            long set = 0;
            int first = -1;
            int last = -1;
            for (int y = from; y < to; y++, p++) {
                float value = v[y];
                if (value > STABILITY_OFFSET) {
                    stableHere++;
                }
                if (value > -STABILITY_OFFSET) {
                    looseHere++;
                }
                if (value > 0) {
                    b[(int) (p >>> 6)] |= 1L << (p & 63);
                    set++;
                    if (first < 0) {
                        first = y;
                    }
                    last = y;
                }
            }
            colStable += stableHere;
            colLoose += looseHere;
            if (set > 0) {
                colSet += set;
                colFirst = colFirst < 0 ? first : colFirst;
                colLast = last;
            }
        }

        /** Rows {@code from..to-1} of the column, all on the side of each threshold that {@code v} is. */
        private void run(int from, int to, float v) {
            int n = to - from;
            if (v > STABILITY_OFFSET) {
                colStable += n;
            }
            if (v > -STABILITY_OFFSET) {
                colLoose += n;
            }
            if (v > 0) {
                long p0 = (long) x * height;
                setRange(bits, p0 + from, p0 + to);
                colSet += n;
                colFirst = colFirst < 0 ? from : colFirst;
                colLast = to - 1;
            }
        }

        private void endColumn() {
            stable += colStable;
            loose += colLoose;
            if (colSet > 0) {
                area += colSet;
                x0 = Math.min(x0, x);
                x1 = x + 1;
                y0 = Math.min(y0, colFirst);
                y1 = Math.max(y1, colLast + 1);
            }
            x++;
        }

        /** Whether every value in [low, high] is on one side of threshold t ({@code v > t} the same for all). */
        private static boolean sideOf(float low, float high, float t) {
            return t < low || high <= t;
        }

        /** Sets bits [from, to). */
        private static void setRange(long[] b, long from, long to) {
            while (from < to) {
                int word = (int) (from >>> 6);
                int bit = (int) (from & 63);
                int n = (int) Math.min(64 - bit, to - from);
                long mask = n == 64 ? -1L : ((1L << n) - 1) << bit;
                b[word] |= mask;
                from += n;
            }
        }

        /** The summary of the {@code w} columns added. */
        public MaskSummary summary() {
            if (x != width) {
                throw new IllegalStateException(x + " columns of " + width + " added");
            }
            int[] box = area == 0 ? new int[4] : new int[] {x0, y0, x1, y1};
            return new MaskSummary(height, width, bits, area, box, stable, loose);
        }
    }

    public int height() {
        return height;
    }

    public int width() {
        return width;
    }

    /** Number of set pixels. */
    public long area() {
        return area;
    }

    /** {@code [x0, y0, x1, y1]}, right and bottom exclusive (as {@link CocoRle#boundingBoxCorners()}); zeros when empty. */
    public int[] box() {
        return box.clone();
    }

    /** SAM's stability score (see the class doc). */
    public float stability() {
        return looseCount == 0 ? 0f : (float) ((double) stableCount / looseCount);
    }

    /** Pixels with logit above {@code +STABILITY_OFFSET}. */
    public long stableCount() {
        return stableCount;
    }

    /** Pixels with logit above {@code -STABILITY_OFFSET}. */
    public long looseCount() {
        return looseCount;
    }

    /** Pixel (x, y) of the mask. */
    public boolean get(int x, int y) {
        if (x < 0 || x >= width || y < 0 || y >= height) {
            throw new IndexOutOfBoundsException("pixel (" + x + ", " + y + ") outside the " + width + "x" + height + " mask");
        }
        long p = (long) x * height + y;
        return (bits[(int) (p >>> 6)] >>> p & 1L) != 0;
    }

    /**
     * This mask without the pixels of {@code other} (same size): its area and box recounted; the stability counts,
     * which describe the model's logits, are kept.
     *
     * @throws IllegalArgumentException when the sizes differ
     */
    public MaskSummary minus(MaskSummary other) {
        if (other.height != height || other.width != width) {
            throw new IllegalArgumentException("cannot take a " + other.width + "x" + other.height + " mask from a "
                    + width + "x" + height + " one");
        }
        int words = (int) (((long) height * width + 63) >>> 6);
        long[] out = new long[words];
        long a = 0;
        for (int i = 0; i < words; i++) {
            out[i] = bits[i] & ~other.bits[i];
            a += Long.bitCount(out[i]);
        }
        int x0 = width;
        int y0 = height;
        int x1 = 0;
        int y1 = 0;
        if (a > 0) {
            for (int x = 0; x < width; x++) {
                long p = (long) x * height;
                for (int y = 0; y < height; y++, p++) {
                    if ((out[(int) (p >>> 6)] >>> p & 1L) != 0) {
                        x0 = Math.min(x0, x);
                        x1 = Math.max(x1, x + 1);
                        y0 = Math.min(y0, y);
                        y1 = Math.max(y1, y + 1);
                    }
                }
            }
        }
        int[] b = a > 0 ? new int[] {x0, y0, x1, y1} : new int[4];
        return new MaskSummary(height, width, out, a, b, stableCount, looseCount);
    }

    /** The column-major mask bits (a copy). */
    public long[] columnMajorBits() {
        return bits.clone();
    }

    /** The mask as a row-major {@code boolean[height * width]}. */
    public boolean[] toRowMajor() {
        boolean[] mask = new boolean[height * width];
        for (int x = 0; x < width; x++) {
            long p = (long) x * height;
            for (int y = 0; y < height; y++, p++) {
                if ((bits[(int) (p >>> 6)] >>> p & 1L) != 0) {
                    mask[y * width + x] = true;
                }
            }
        }
        return mask;
    }

    /** The COCO RLE of the mask: the run lengths come straight from the column-major bits, word by word. */
    public CocoRle rle() {
        long total = (long) height * width;
        int[] runs = new int[16];
        int n = 0;
        long pos = 0;
        boolean value = false;
        while (pos < total) {
            long next = Math.min(nextDifferent(pos, value), total);
            if (n == runs.length) {
                runs = Arrays.copyOf(runs, n * 2);
            }
            runs[n++] = (int) (next - pos);
            pos = next;
            value = !value;
        }
        return CocoRle.ofCounts(Arrays.copyOf(runs, n), height, width);
    }

    /** The first bit position at or after {@code pos} whose value is not {@code value} (may pass the end). */
    private long nextDifferent(long pos, boolean value) {
        long flip = value ? -1L : 0L;
        int word = (int) (pos >>> 6);
        long w = (bits[word] ^ flip) & (-1L << pos); // bits below pos cleared (shift counts are mod 64)
        while (w == 0) {
            word++;
            if (word >= bits.length) {
                return (long) bits.length << 6;
            }
            w = bits[word] ^ flip;
        }
        return ((long) word << 6) + Long.numberOfTrailingZeros(w);
    }

    @Override
    public String toString() {
        return "MaskSummary[" + height + "x" + width + ", area " + area + ", box " + Arrays.toString(box)
                + ", stability " + stability() + "]";
    }
}
