package io.samstream.gpu.image;

import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code Sam.postprocess_masks} followed by the predictor's threshold: low-resolution mask logits to
 * masks the size of the original frame.
 *
 * <p>The reference does: bilinear ({@code align_corners=False}) from L x L to the padded input S x S, crop
 * to the resized frame h' x w', bilinear again to the original H x W, then {@code logits > 0}. Here the two
 * resamplings are fused: the intermediate S x S plane is never built; the intermediate rows the second
 * step reads are computed on demand (the two most recent are kept) and only over the cropped width. Each
 * intermediate value is computed by exactly the float32 expression of the first step, so the result equals
 * the two-step computation bit for bit (the tests check this against a literal two-step version).
 *
 * <p>Each value is PyTorch's {@code h0 * (w0 * a + w1 * b) + h1 * (w0 * c + w1 * d)} in float32, evaluated with
 * fused multiply-adds the way the compiled kernels evaluate it: {@code fma(h0, fma(w0, a, w1 * b), h1 * fma(w0,
 * c, w1 * d))} (see {@link LinearAxis} for the source positions). This is bit-exact with
 * {@code F.interpolate(..., mode="bilinear", align_corners=False)} of PyTorch 2.11 on the GPU machine, whose
 * CUDA and x86 CPU results agree bit for bit (tools/fixtures/make_imaging_fixtures.py, ReferenceParityTest);
 * the plain multiply-then-add evaluation differs in the last bit of many logits. {@link Math#fma} is an
 * intrinsic on CPUs with FMA instructions (every x86-64 since Haswell, every ARMv8).
 */
public final class MaskPostprocessor {
    /** The predictor's {@code mask_threshold}: a pixel is in the mask when its logit is above this. */
    public static final float MASK_THRESHOLD = 0.0f;

    private final int inputSize;

    /** @param inputSize side S of the square encoder input (1024 for SAM) */
    public MaskPostprocessor(int inputSize) {
        if (inputSize <= 0) {
            throw new IllegalArgumentException("input size must be positive, got " + inputSize);
        }
        this.inputSize = inputSize;
    }

    public int inputSize() {
        return inputSize;
    }

    /**
     * Upscaled logits: {@code [..., L, L]} (e.g. {@code [N, L, L]} or {@code [B, C, L, L]}) to
     * {@code [..., H, W]}, H x W being {@code original}.
     *
     * @param resized  h' x w', the size of the frame after {@link ResizeLongestSide} (at most S x S)
     * @param original H x W, the size of the frame before it
     */
    public Tensor upscaleLogits(Tensor lowRes, ImageSize resized, ImageSize original) {
        Plan plan = plan(lowRes, resized, original);
        int[] outShape = lowRes.shape();
        outShape[outShape.length - 2] = original.height();
        outShape[outShape.length - 1] = original.width();
        float[] out = new float[Math.toIntExact(Tensor.numel(outShape))];
        int outPlane = original.height() * original.width();
        for (int m = 0; m < plan.count; m++) {
            plan.run(lowRes.data(), m * plan.inPlane, out, null, m * outPlane);
        }
        return new Tensor(out, outShape);
    }

    /**
     * Binary masks: one row-major {@code boolean[H * W]} per low-res plane (planes in the order of the
     * leading dimensions of {@code lowRes}); a pixel is set when its upscaled logit is above 0.
     */
    public boolean[][] masks(Tensor lowRes, ImageSize resized, ImageSize original) {
        Plan plan = plan(lowRes, resized, original);
        boolean[][] masks = new boolean[plan.count][];
        for (int m = 0; m < plan.count; m++) {
            masks[m] = new boolean[Math.toIntExact(original.pixels())];
            plan.run(lowRes.data(), m * plan.inPlane, null, masks[m], 0);
        }
        return masks;
    }

    /**
     * What the engine keeps of each upscaled plane, in one pass over its pixels and without building the
     * logits: the mask bits (column-major), area, box and the stability counts ({@link MaskSummary}). The
     * values are those of {@link #upscaleLogits} thresholded at 0 (mask), +1 and -1 (stability); the box and
     * area are those of {@link io.samstream.gpu.mask.CocoRle} of the mask. One summary per low-res plane,
     * in the order of the leading dimensions of {@code lowRes}.
     */
    public List<MaskSummary> summarize(Tensor lowRes, ImageSize resized, ImageSize original) {
        Plan plan = plan(lowRes, resized, original);
        List<MaskSummary> out = new ArrayList<>(plan.count);
        for (int m = 0; m < plan.count; m++) {
            out.add(plan.summarize(lowRes.data(), m * plan.inPlane));
        }
        return out;
    }

    /** Thresholds logits at {@link #MASK_THRESHOLD}; NaN counts as outside. */
    public static boolean[] threshold(float[] logits, int offset, int length) {
        boolean[] mask = new boolean[length];
        for (int i = 0; i < length; i++) {
            mask[i] = logits[offset + i] > MASK_THRESHOLD;
        }
        return mask;
    }

    private Plan plan(Tensor lowRes, ImageSize resized, ImageSize original) {
        if (lowRes.rank() < 2) {
            throw new IllegalArgumentException("low-res logits need at least 2 dimensions, got " + lowRes.shapeString());
        }
        if (resized.height() > inputSize || resized.width() > inputSize) {
            throw new IllegalArgumentException("resized size " + resized + " exceeds the " + inputSize + "x"
                    + inputSize + " model input");
        }
        int lh = lowRes.dim(-2);
        int lw = lowRes.dim(-1);
        if (lh == 0 || lw == 0) {
            throw new IllegalArgumentException("low-res logits have an empty plane: " + lowRes.shapeString());
        }
        int count = lowRes.size() / (lh * lw);
        return new Plan(count, lw, lh * lw,
                LinearAxis.of(lh, inputSize), LinearAxis.of(lw, inputSize),
                LinearAxis.of(resized.height(), original.height()), LinearAxis.of(resized.width(), original.width()),
                resized.width());
    }

    /** The axes of both resampling steps for one geometry, and the row cache of the intermediate plane. */
    private static final class Plan {
        final int count;
        final int inWidth;
        final int inPlane;
        final LinearAxis firstRows;
        final LinearAxis firstCols;
        final LinearAxis secondRows;
        final LinearAxis secondCols;
        final int croppedWidth;
        // Two intermediate rows: the second step reads rows i0 and i1 = i0 or i0 + 1, nondecreasing.
        final float[][] rows;
        final int[] rowIndex = new int[2];

        Plan(int count, int inWidth, int inPlane, LinearAxis firstRows, LinearAxis firstCols,
                LinearAxis secondRows, LinearAxis secondCols, int croppedWidth) {
            this.count = count;
            this.inWidth = inWidth;
            this.inPlane = inPlane;
            this.firstRows = firstRows;
            this.firstCols = firstCols;
            this.secondRows = secondRows;
            this.secondCols = secondCols;
            this.croppedWidth = croppedWidth;
            this.rows = new float[2][croppedWidth];
        }

        /** Upscales one plane; writes logits to {@code logits} and/or the thresholded mask to {@code mask}. */
        void run(float[] in, int inOffset, float[] logits, boolean[] mask, int outOffset) {
            Arrays.fill(rowIndex, -1);
            int outWidth = secondCols.outSize;
            for (int y = 0; y < secondRows.outSize; y++) {
                float[] top = intermediateRow(in, inOffset, secondRows.i0[y], -1);
                float[] bottom = intermediateRow(in, inOffset, secondRows.i1[y], secondRows.i0[y]);
                float wy0 = secondRows.l0[y];
                float wy1 = secondRows.l1[y];
                int o = outOffset + y * outWidth;
                for (int x = 0; x < outWidth; x++) {
                    int c0 = secondCols.i0[x];
                    int c1 = secondCols.i1[x];
                    float wx0 = secondCols.l0[x];
                    float wx1 = secondCols.l1[x];
                    float v = lerp2(wy0, wy1, wx0, wx1, top[c0], top[c1], bottom[c0], bottom[c1]);
                    if (logits != null) {
                        logits[o + x] = v;
                    }
                    if (mask != null) {
                        mask[o + x] = v > MASK_THRESHOLD;
                    }
                }
            }
        }

        /** Upscales one plane into a {@link MaskSummary} (the loop of {@link #run}, counting instead of storing). */
        MaskSummary summarize(float[] in, int inOffset) {
            Arrays.fill(rowIndex, -1);
            int outHeight = secondRows.outSize;
            int outWidth = secondCols.outSize;
            float stable = MASK_THRESHOLD + MaskSummary.STABILITY_OFFSET;
            float loose = MASK_THRESHOLD - MaskSummary.STABILITY_OFFSET;
            long[] bits = new long[(int) (((long) outHeight * outWidth + 63) >>> 6)];
            long area = 0;
            long stableCount = 0;
            long looseCount = 0;
            int minX = outWidth;
            int minY = outHeight;
            int maxX = -1;
            int maxY = -1;
            for (int y = 0; y < outHeight; y++) {
                float[] top = intermediateRow(in, inOffset, secondRows.i0[y], -1);
                float[] bottom = intermediateRow(in, inOffset, secondRows.i1[y], secondRows.i0[y]);
                float wy0 = secondRows.l0[y];
                float wy1 = secondRows.l1[y];
                int rowMinX = outWidth;
                int rowMaxX = -1;
                for (int x = 0; x < outWidth; x++) {
                    int c0 = secondCols.i0[x];
                    int c1 = secondCols.i1[x];
                    float v = lerp2(wy0, wy1, secondCols.l0[x], secondCols.l1[x], top[c0], top[c1], bottom[c0],
                            bottom[c1]);
                    if (v > stable) {
                        stableCount++;
                    }
                    if (v > loose) {
                        looseCount++;
                    }
                    if (v > MASK_THRESHOLD) {
                        long p = (long) x * outHeight + y;
                        bits[(int) (p >>> 6)] |= 1L << p;
                        area++;
                        rowMinX = Math.min(rowMinX, x);
                        rowMaxX = x;
                    }
                }
                if (rowMaxX >= 0) {
                    minX = Math.min(minX, rowMinX);
                    maxX = Math.max(maxX, rowMaxX);
                    minY = Math.min(minY, y);
                    maxY = y;
                }
            }
            int[] box = area == 0 ? new int[4] : new int[] {minX, minY, maxX + 1, maxY + 1};
            return new MaskSummary(outHeight, outWidth, bits, area, box, stableCount, looseCount);
        }

        /** PyTorch's bilinear combination of a (top left), b (top right), c (bottom left), d (bottom right). */
        private static float lerp2(float h0, float h1, float w0, float w1, float a, float b, float c, float d) {
            return Math.fma(h0, Math.fma(w0, a, w1 * b), h1 * Math.fma(w0, c, w1 * d));
        }

        /** Row {@code r} of the S x S intermediate, columns 0..w'; never evicts row {@code keep}. */
        private float[] intermediateRow(float[] in, int inOffset, int r, int keep) {
            for (int s = 0; s < 2; s++) {
                if (rowIndex[s] == r) {
                    return rows[s];
                }
            }
            int slot = rowIndex[0] == keep ? 1 : 0;
            float[] row = rows[slot];
            int top = inOffset + firstRows.i0[r] * inWidth;
            int bottom = inOffset + firstRows.i1[r] * inWidth;
            float wy0 = firstRows.l0[r];
            float wy1 = firstRows.l1[r];
            for (int c = 0; c < croppedWidth; c++) {
                int c0 = firstCols.i0[c];
                int c1 = firstCols.i1[c];
                float wx0 = firstCols.l0[c];
                float wx1 = firstCols.l1[c];
                row[c] = lerp2(wy0, wy1, wx0, wx1, in[top + c0], in[top + c1], in[bottom + c0], in[bottom + c1]);
            }
            rowIndex[slot] = r;
            return row;
        }
    }
}
