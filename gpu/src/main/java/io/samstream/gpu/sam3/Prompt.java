package io.samstream.gpu.sam3;

/**
 * The prompt tokens the detector attends to: the phrase's rows then the geometry encoder's (exemplar boxes and its
 * class token), with their padding mask ({@code prompt}, {@code prompt_mask} in Meta's {@code _encode_prompt}).
 *
 * @param rows    [length, d]
 * @param padding per token, true for padding
 * @param phrase  the phrase whose rows lead {@code rows} ({@link #concat} says so), or null when not known; only a
 *                hint for work that depends on the phrase alone and may be kept per phrase ({@link DotProductScoring}),
 *                which still reads the rows themselves
 */
public record Prompt(float[] rows, boolean[] padding, TextFeatures phrase) {
    public Prompt {
        if (phrase != null && phrase.length() > padding.length) {
            throw new IllegalArgumentException("a phrase of " + phrase.length() + " tokens cannot lead a prompt of "
                    + padding.length);
        }
    }

    /** A prompt of these rows, its phrase not known. */
    public Prompt(float[] rows, boolean[] padding) {
        this(rows, padding, null);
    }

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
        return new Prompt(rows, padding, text);
    }
}
