package io.samstream.gpu.sam3.video;

import io.samstream.gpu.sam3.ExemplarBox;
import java.util.List;

/**
 * What a stream looks for: a noun phrase ("person", "red car"), optionally with exemplar boxes around examples on
 * the frame it arrives with (positive) or counter-examples (negative). The boxes refer to that frame's pixels, so
 * they are applied on the concept's first frame only, as Meta's video predictor applies a box on the frame it was
 * drawn on; later frames are searched by the phrase. A concept of boxes alone (empty phrase) finds its instances on
 * that first frame (the text "visual" standing in, as Meta's does) and then only tracks them.
 *
 * @param phrase    the noun phrase (may be empty when there are boxes)
 * @param exemplars exemplar boxes in the model input's normalized coordinates
 */
public record Concept(String phrase, List<ExemplarBox> exemplars) {
    /** The longest phrase taken; the tokenizer keeps the first 32 tokens of it anyway. */
    public static final int MAX_PHRASE_CHARS = 1000;
    /** Exemplar boxes a concept may have. */
    public static final int MAX_EXEMPLARS = 16;
    /** The text Meta's predictor encodes for a concept of boxes alone. */
    static final String VISUAL = "visual";

    public Concept {
        if (phrase == null) {
            throw new IllegalArgumentException("a concept's phrase is null (give \"\" for boxes alone)");
        }
        phrase = phrase.strip();
        exemplars = exemplars == null ? List.of() : List.copyOf(exemplars);
        if (phrase.length() > MAX_PHRASE_CHARS) {
            throw new IllegalArgumentException("a concept's phrase has " + phrase.length() + " characters, at most "
                    + MAX_PHRASE_CHARS);
        }
        if (exemplars.size() > MAX_EXEMPLARS) {
            throw new IllegalArgumentException("a concept has " + exemplars.size() + " exemplar boxes, at most "
                    + MAX_EXEMPLARS);
        }
        if (phrase.isEmpty() && exemplars.isEmpty()) {
            throw new IllegalArgumentException("a concept needs a phrase or exemplar boxes");
        }
    }

    /** A phrase alone. */
    public static Concept of(String phrase) {
        return new Concept(phrase, List.of());
    }

    /** The text the detector encodes. */
    String text() {
        return phrase.isEmpty() ? VISUAL : phrase;
    }

    @Override
    public String toString() {
        return phrase.isEmpty() ? exemplars.size() + " exemplar box(es)" : exemplars.isEmpty() ? "\"" + phrase + "\""
                : "\"" + phrase + "\" + " + exemplars.size() + " exemplar box(es)";
    }
}
