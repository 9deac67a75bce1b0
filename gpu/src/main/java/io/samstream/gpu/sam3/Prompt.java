package io.samstream.gpu.sam3;

/**
 * The prompt tokens the detector attends to: the phrase's rows then the geometry encoder's (exemplar boxes and its
 * class token), with their padding mask ({@code prompt}, {@code prompt_mask} in Meta's {@code _encode_prompt}).
 *
 * @param rows    [length, d]
 * @param padding per token, true for padding
 */
public record Prompt(float[] rows, boolean[] padding) {
    public int length() {
        return padding.length;
    }

    /** The tokens that are not padding. */
    public int validTokens() {
        int n = 0;
        for (boolean p : padding) {
            n += p ? 0 : 1;
        }
        return n;
    }

    static Prompt concat(TextFeatures text, float[] geometry, int geometryTokens, int d) {
        int n = text.length() + geometryTokens;
        float[] rows = new float[n * d];
        System.arraycopy(text.rows(), 0, rows, 0, text.length() * d);
        System.arraycopy(geometry, 0, rows, text.length() * d, geometryTokens * d);
        boolean[] padding = new boolean[n];
        System.arraycopy(text.padding(), 0, padding, 0, text.length());
        return new Prompt(rows, padding);
    }
}
