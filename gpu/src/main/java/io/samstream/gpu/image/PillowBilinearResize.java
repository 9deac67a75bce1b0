package io.samstream.gpu.image;

import java.util.ArrayList;
import java.util.List;

/**
 * Pillow's {@code Image.resize(size, Image.BILINEAR)} for 8-bit RGB images, bit for bit.
 *
 * <p>SAM's reference pre-processing resizes with PIL, so the pixels the encoder sees are Pillow's. This
 * follows Pillow's {@code libImaging/Resample.c} (the 8 bits per channel path) step by step:
 * <ul>
 *   <li>{@code Image.resize}'s own rule (Pillow 12.2 and later) for images over 100 times taller than wide;</li>
 *   <li>two separable passes, horizontal first into an 8-bit intermediate, then vertical; a pass runs only
 *       when its axis changes size, and the horizontal pass only produces the rows the vertical pass
 *       reads;</li>
 *   <li>a triangle filter whose support widens by the downscale factor (that is the antialiasing when
 *       shrinking); the weights of each output pixel are normalized by their sum;</li>
 *   <li>weights in fixed point with {@value #PRECISION_BITS} fraction bits, rounded half away from zero,
 *       accumulated in {@code int} from a half-unit offset and clipped to 0..255.</li>
 * </ul>
 * The coefficient arithmetic is done in {@code double} in the same order as the C code, so the
 * fixed-point weights, and hence the output bytes, are the same: ReferenceParityTest checks 66 resizes
 * (SAM's longest-side resize of 10 frame sizes and 12 direct resizes, on noise, gradients and hard edges)
 * against digests of Pillow 12.3.0 output. Pillow's C code compiled with fused multiply-adds (e.g. on ARM,
 * where GCC contracts by default) could round a weight differently; x86-64 wheels do not.
 */
public final class PillowBilinearResize {
    /** Fraction bits of the fixed-point weights: 32 - 8 (result) - 2 (headroom), as Pillow. */
    static final int PRECISION_BITS = 32 - 8 - 2;

    /** Half-width of the bilinear (triangle) filter before it is widened for downscaling. */
    private static final double FILTER_SUPPORT = 1.0;

    private PillowBilinearResize() {}

    /** {@code image} resized to {@code width} x {@code height}; the same image when the size is unchanged. */
    public static RgbImage resize(RgbImage image, int width, int height) {
        if (width <= 0 || height <= 0) {
            throw new IllegalArgumentException("target size must be positive, got " + width + "x" + height);
        }
        // Image.resize since Pillow 12.2: an image over 100 times taller than wide that loses height is
        // resized in two separate calls, height first. (Older Pillow goes straight to the two passes below,
        // so such images differ from it.)
        if (image.height() > (long) image.width() * 100 && height < image.height()) {
            return resample(resample(image, image.width(), height), width, height);
        }
        return resample(image, width, height);
    }

    /**
     * One separable pass of {@link #resize}, with its fixed-point weights, for executors other than this
     * class (the CUDA pre-processing runs these on the GPU). A horizontal pass reads rows
     * {@code firstRow .. firstRow + outHeight} of its {@code inWidth x inHeight} input and resamples each to
     * {@code outWidth} columns; a vertical pass keeps the width and resamples columns to {@code outHeight}
     * rows. Output pixel {@code o} along the resampled axis is
     * {@code clip8((1 << 21) + sum_i in[bounds[2o] + i] * weights[o * kernelSize + i])} for
     * {@code i < bounds[2o + 1]}, where 8-bit values are clipped after each pass, as here.
     */
    public record Pass(boolean horizontal, int inWidth, int inHeight, int outWidth, int outHeight, int firstRow,
            int kernelSize, int[] bounds, int[] weights) {}

    /**
     * The passes {@link #resize} makes to turn a {@code width x height} image into {@code outWidth x outHeight},
     * in order, each reading the previous one's output (the first reads the image): none when the size is
     * unchanged, at most two. Executing them as described in {@link Pass} gives {@link #resize}'s bytes.
     */
    public static List<Pass> passes(int width, int height, int outWidth, int outHeight) {
        if (width <= 0 || height <= 0 || outWidth <= 0 || outHeight <= 0) {
            throw new IllegalArgumentException("sizes must be positive, got " + width + "x" + height + " to "
                    + outWidth + "x" + outHeight);
        }
        List<Pass> passes = new ArrayList<>(2);
        if (height > (long) width * 100 && outHeight < height) {
            addPasses(passes, width, height, width, outHeight);
            addPasses(passes, width, outHeight, outWidth, outHeight);
        } else {
            addPasses(passes, width, height, outWidth, outHeight);
        }
        return passes;
    }

    /** The passes of {@link #resample}, in the same order and with the same weights. */
    private static void addPasses(List<Pass> passes, int width, int height, int outWidth, int outHeight) {
        boolean horizontal = outWidth != width;
        boolean vertical = outHeight != height;
        if (!horizontal && !vertical) {
            return;
        }
        Weights rows = Weights.compute(height, outHeight);
        int rowsIn = height;
        if (horizontal) {
            int firstRow = rows.firstUsed();
            int rowCount = rows.lastUsedExclusive() - firstRow;
            Weights cols = Weights.compute(width, outWidth);
            passes.add(new Pass(true, width, height, outWidth, rowCount, firstRow, cols.kernelSize, cols.bounds.clone(),
                    cols.fixed.clone()));
            rows = rows.shiftedBy(-firstRow);
            rowsIn = rowCount;
        }
        if (vertical) {
            int w = horizontal ? outWidth : width;
            passes.add(new Pass(false, w, rowsIn, w, outHeight, 0, rows.kernelSize, rows.bounds.clone(),
                    rows.fixed.clone()));
        }
    }

    /** Pillow's ImagingResample with the whole image as the box. */
    private static RgbImage resample(RgbImage image, int width, int height) {
        boolean horizontal = width != image.width();
        boolean vertical = height != image.height();
        if (!horizontal && !vertical) {
            return image;
        }

        // The vertical weights come first: they say which source rows the output needs at all.
        Weights rows = Weights.compute(image.height(), height);
        RgbImage source = image;
        if (horizontal) {
            int firstRow = rows.firstUsed();
            int lastRow = rows.lastUsedExclusive();
            source = resampleHorizontal(image, Weights.compute(image.width(), width), firstRow, lastRow - firstRow);
            rows = rows.shiftedBy(-firstRow);
        }
        return vertical ? resampleVertical(source, rows) : source;
    }

    /** Rows {@code firstRow .. firstRow + rowCount} of {@code in}, each resampled to the columns of {@code w}. */
    private static RgbImage resampleHorizontal(RgbImage in, Weights w, int firstRow, int rowCount) {
        byte[] src = in.rgb();
        int inStride = in.width() * 3;
        int outWidth = w.outSize();
        byte[] out = new byte[rowCount * outWidth * 3];
        int o = 0;
        for (int y = 0; y < rowCount; y++) {
            int rowStart = (y + firstRow) * inStride;
            for (int xx = 0; xx < outWidth; xx++) {
                int start = w.start(xx);
                int count = w.count(xx);
                int base = w.base(xx);
                int r = 1 << (PRECISION_BITS - 1);
                int g = r;
                int b = r;
                int p = rowStart + start * 3;
                for (int i = 0; i < count; i++, p += 3) {
                    int k = w.fixed[base + i];
                    r += (src[p] & 0xFF) * k;
                    g += (src[p + 1] & 0xFF) * k;
                    b += (src[p + 2] & 0xFF) * k;
                }
                out[o++] = clip8(r);
                out[o++] = clip8(g);
                out[o++] = clip8(b);
            }
        }
        return new RgbImage(outWidth, rowCount, out);
    }

    /** Columns of {@code in} resampled to the rows of {@code w}; each output row sums whole source rows in turn. */
    private static RgbImage resampleVertical(RgbImage in, Weights w) {
        byte[] src = in.rgb();
        int stride = in.width() * 3;
        int outHeight = w.outSize();
        byte[] out = new byte[outHeight * stride];
        int[] acc = new int[stride];
        for (int yy = 0; yy < outHeight; yy++) {
            int start = w.start(yy);
            int count = w.count(yy);
            int base = w.base(yy);
            java.util.Arrays.fill(acc, 1 << (PRECISION_BITS - 1));
            for (int i = 0; i < count; i++) {
                int k = w.fixed[base + i];
                int p = (start + i) * stride;
                for (int c = 0; c < stride; c++) {
                    acc[c] += (src[p + c] & 0xFF) * k;
                }
            }
            int o = yy * stride;
            for (int c = 0; c < stride; c++) {
                out[o + c] = clip8(acc[c]);
            }
        }
        return new RgbImage(in.width(), outHeight, out);
    }

    /** Pillow's clip8: drop the fraction bits, saturate to a byte. */
    static byte clip8(int acc) {
        int v = acc >> PRECISION_BITS;
        return (byte) (v < 0 ? 0 : Math.min(v, 255));
    }

    /** The per-output-pixel source windows and fixed-point weights along one axis. */
    static final class Weights {
        private final int outSize;
        private final int kernelSize;
        private final int[] bounds; // per output pixel: first source index, number of source pixels
        final int[] fixed; // outSize * kernelSize fixed-point weights

        private Weights(int outSize, int kernelSize, int[] bounds, int[] fixed) {
            this.outSize = outSize;
            this.kernelSize = kernelSize;
            this.bounds = bounds;
            this.fixed = fixed;
        }

        /**
         * Pillow's precompute_coeffs for the whole axis (box 0..inSize) followed by normalize_coeffs_8bpc.
         * The double expressions keep the C operand order: rounding must match, not just the math.
         */
        static Weights compute(int inSize, int outSize) {
            double scale = (double) inSize / outSize;
            double filterScale = Math.max(scale, 1.0);
            double support = FILTER_SUPPORT * filterScale;
            int kernelSize = (int) Math.ceil(support) * 2 + 1;
            double ss = 1.0 / filterScale;

            int[] bounds = new int[outSize * 2];
            int[] fixed = new int[outSize * kernelSize];
            double[] k = new double[kernelSize];
            for (int xx = 0; xx < outSize; xx++) {
                double center = (xx + 0.5) * scale;
                // (int) truncates toward zero, as the C cast; the +0.5 makes it a rounding.
                int xmin = (int) (center - support + 0.5);
                if (xmin < 0) {
                    xmin = 0;
                }
                int xmax = (int) (center + support + 0.5);
                if (xmax > inSize) {
                    xmax = inSize;
                }
                xmax -= xmin;
                double sum = 0.0;
                for (int x = 0; x < xmax; x++) {
                    double w = triangle((x + xmin - center + 0.5) * ss);
                    k[x] = w;
                    sum += w;
                }
                for (int x = 0; x < xmax; x++) {
                    double normalized = sum != 0.0 ? k[x] / sum : k[x];
                    fixed[xx * kernelSize + x] = toFixed(normalized);
                }
                bounds[xx * 2] = xmin;
                bounds[xx * 2 + 1] = xmax;
            }
            return new Weights(outSize, kernelSize, bounds, fixed);
        }

        private static double triangle(double x) {
            if (x < 0.0) {
                x = -x;
            }
            return x < 1.0 ? 1.0 - x : 0.0;
        }

        /** Rounds half away from zero into PRECISION_BITS fixed point, as normalize_coeffs_8bpc. */
        static int toFixed(double weight) {
            return weight < 0
                    ? (int) (-0.5 + weight * (1 << PRECISION_BITS))
                    : (int) (0.5 + weight * (1 << PRECISION_BITS));
        }

        int outSize() {
            return outSize;
        }

        int start(int out) {
            return bounds[out * 2];
        }

        int count(int out) {
            return bounds[out * 2 + 1];
        }

        int base(int out) {
            return out * kernelSize;
        }

        /** Fixed-point weight {@code i} of output pixel {@code out}, for tests. */
        int weight(int out, int i) {
            return fixed[out * kernelSize + i];
        }

        int firstUsed() {
            return bounds[0];
        }

        int lastUsedExclusive() {
            return bounds[(outSize - 1) * 2] + bounds[(outSize - 1) * 2 + 1];
        }

        /** The same weights reading from a source whose index 0 is this axis' index {@code -delta}. */
        Weights shiftedBy(int delta) {
            int[] shifted = bounds.clone();
            for (int i = 0; i < outSize; i++) {
                shifted[i * 2] += delta;
            }
            return new Weights(outSize, kernelSize, shifted, fixed);
        }
    }
}
