package io.samstream.gpu.image;

import io.samstream.gpu.tensor.Tensor;
import java.util.Arrays;

/**
 * {@code Sam.preprocess} on a resized frame: uint8 RGB (HWC) to an fp32 {@code [3, S, S]} plane stack,
 * {@code (x - pixel_mean) / pixel_std} per channel, zero-padded at the bottom and right to S x S.
 *
 * <p>The padding is applied after normalization, so padded pixels are exactly 0 (not {@code -mean/std}).
 * Arithmetic is float32 as in PyTorch: the uint8 value promoted to float, minus the float32 mean, divided
 * by the float32 std.
 */
public final class SamPreprocessor {
    /** segment-anything's {@code pixel_mean} (ImageNet statistics on the 0..255 scale), R, G, B. */
    private static final float[] PIXEL_MEAN = {123.675f, 116.28f, 103.53f};
    /** segment-anything's {@code pixel_std}, R, G, B. */
    private static final float[] PIXEL_STD = {58.395f, 57.12f, 57.375f};

    private final int inputSize;

    /** @param inputSize side S of the square encoder input ({@code SamConfig.imageSize()}, 1024 for SAM) */
    public SamPreprocessor(int inputSize) {
        if (inputSize <= 0) {
            throw new IllegalArgumentException("input size must be positive, got " + inputSize);
        }
        this.inputSize = inputSize;
    }

    public int inputSize() {
        return inputSize;
    }

    /** {@code pixel_mean}, R, G, B (a copy). */
    public static float[] pixelMean() {
        return PIXEL_MEAN.clone();
    }

    /** {@code pixel_std}, R, G, B (a copy). */
    public static float[] pixelStd() {
        return PIXEL_STD.clone();
    }

    /** A new {@code [1, 3, S, S]} tensor holding the normalized, padded image. */
    public Tensor apply(RgbImage resized) {
        Tensor out = Tensor.zeros(1, 3, inputSize, inputSize);
        applyInto(resized, out, 0);
        return out;
    }

    /**
     * Writes the normalized, padded image into slot {@code index} of a {@code [B, 3, S, S]} batch. The
     * padding is written too (as zeros), so a reused batch tensor needs no clearing.
     */
    public void applyInto(RgbImage resized, Tensor batch, int index) {
        int s = inputSize;
        if (batch.rank() != 4 || batch.dim(1) != 3 || batch.dim(2) != s || batch.dim(3) != s) {
            throw new IllegalArgumentException("batch must have shape [B, 3, " + s + ", " + s + "], got "
                    + batch.shapeString());
        }
        if (index < 0 || index >= batch.dim(0)) {
            throw new IndexOutOfBoundsException("batch index " + index + " outside [0, " + batch.dim(0) + ")");
        }
        int w = resized.width();
        int h = resized.height();
        if (w > s || h > s) {
            throw new IllegalArgumentException("image of " + w + "x" + h + " does not fit the " + s + "x" + s
                    + " input; resize it with ResizeLongestSide first");
        }
        byte[] rgb = resized.rgb();
        float[] out = batch.data();
        int plane = s * s;
        for (int c = 0; c < 3; c++) {
            float mean = PIXEL_MEAN[c];
            float std = PIXEL_STD[c];
            int planeStart = (index * 3 + c) * plane;
            for (int y = 0; y < h; y++) {
                int o = planeStart + y * s;
                int p = y * w * 3 + c;
                for (int x = 0; x < w; x++, p += 3) {
                    out[o + x] = ((rgb[p] & 0xFF) - mean) / std;
                }
                Arrays.fill(out, o + w, o + s, 0f);
            }
            Arrays.fill(out, planeStart + h * s, planeStart + plane, 0f);
        }
    }
}
