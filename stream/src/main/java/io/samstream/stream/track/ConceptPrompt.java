package io.samstream.stream.track;

import java.util.List;

/**
 * One concept a stream looks for with SAM 3: a noun phrase ("forklift") and, optionally, exemplar boxes around
 * examples (positive) or counter-examples (negative) on the frame it first applies to, in that frame's pixels. Two
 * concepts are the same when phrase and boxes are; a stream has one concept per phrase.
 *
 * @param text  the noun phrase, stripped, not empty (what the records' {@code concept} field says)
 * @param boxes exemplar boxes, at most {@link #MAX_BOXES}
 */
public record ConceptPrompt(String text, List<Box> boxes) {
    /** Exemplar boxes one concept may have (SAM 3's video tracker takes up to 16). */
    public static final int MAX_BOXES = 16;

    public ConceptPrompt {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("a concept needs its noun phrase");
        }
        text = text.strip();
        boxes = boxes == null ? List.of() : List.copyOf(boxes);
        if (boxes.size() > MAX_BOXES) {
            throw new IllegalArgumentException("concept \"" + text + "\" has " + boxes.size()
                    + " exemplar boxes, at most " + MAX_BOXES);
        }
    }

    /** A phrase alone (what a stream definition's {@code prompts.concepts} gives). */
    public static ConceptPrompt of(String text) {
        return new ConceptPrompt(text, List.of());
    }

    /** Phrases alone. */
    public static List<ConceptPrompt> of(List<String> texts) {
        return texts.stream().map(ConceptPrompt::of).toList();
    }

    /**
     * An exemplar box in frame pixels, x1 and y1 exclusive.
     *
     * @param positive an example of the concept (true) or a counter-example (false)
     */
    public record Box(double x0, double y0, double x1, double y1, boolean positive) {
        public Box {
            for (double v : new double[] {x0, y0, x1, y1}) {
                if (!Double.isFinite(v) || v < 0) {
                    throw new IllegalArgumentException("an exemplar box's coordinates are finite and >= 0");
                }
            }
            if (x1 <= x0 || y1 <= y0) {
                throw new IllegalArgumentException("an exemplar box is [x0, y0, x1, y1] with x1 > x0, y1 > y0");
            }
        }

        /** Whether it lies within a {@code width} x {@code height} frame. */
        public boolean inside(int width, int height) {
            return x1 <= width && y1 <= height;
        }
    }
}
