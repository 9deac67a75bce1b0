package io.samstream.gpu.sam3;

/**
 * A phrase as the detector reads it ({@code language_features} and {@code language_mask}): one row per context
 * position, resized to the detector's width, and which positions are padding (token id 0).
 *
 * @param tokens  the token ids [context]
 * @param rows    [context, d]
 * @param padding per position, true for padding
 */
public record TextFeatures(int[] tokens, float[] rows, boolean[] padding) {
    public int length() {
        return tokens.length;
    }
}
