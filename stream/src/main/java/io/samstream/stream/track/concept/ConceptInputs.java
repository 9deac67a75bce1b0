package io.samstream.stream.track.concept;

import io.samstream.gpu.sam3.ExemplarBox;
import io.samstream.gpu.sam3.video.Concept;
import io.samstream.stream.track.ConceptPrompt;
import java.util.ArrayList;
import java.util.List;

/**
 * A stream's concepts as SAM 3's video tracker takes them: the phrase, and each exemplar box in the model input's
 * normalized coordinates (the frame is resized to the square input, so frame fractions are input fractions). Equal
 * prompts give equal concepts, so a concept keeps its tracks from frame to frame.
 */
final class ConceptInputs {
    private ConceptInputs() {}

    static List<Concept> of(List<ConceptPrompt> prompts, int width, int height) {
        List<Concept> out = new ArrayList<>(prompts.size());
        for (ConceptPrompt p : prompts) {
            List<ExemplarBox> boxes = new ArrayList<>(p.boxes().size());
            for (ConceptPrompt.Box b : p.boxes()) {
                boxes.add(ExemplarBox.fromCorners((float) b.x0(), (float) b.y0(), (float) b.x1(), (float) b.y1(),
                        width, height, b.positive()));
            }
            out.add(new Concept(p.text(), boxes));
        }
        return out;
    }
}
