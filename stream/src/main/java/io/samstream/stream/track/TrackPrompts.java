package io.samstream.stream.track;

import io.samstream.config.PromptSpec.ObjectPrompt;
import java.util.List;
import java.util.Set;

/**
 * A stream's prompted objects for one frame, as the tracker needs them: each prompt with its revision
 * (which changes whenever the object's prompt is added or updated), and the generation (which changes on
 * a reset: every track starts over).
 *
 * @param objects    the frame's prompted objects, ids unique, in the order records list them
 * @param generation the number of the reset the prompts descend from
 * @param dismissed  discovered objects removed through the prompts topic: their tracks end
 * @param concepts   the concepts to look for (SAM 3), in the order they were asked for
 */
public record TrackPrompts(List<Seed> objects, long generation, Set<Integer> dismissed,
        List<ConceptPrompt> concepts) {
    public TrackPrompts {
        objects = List.copyOf(objects);
        dismissed = Set.copyOf(dismissed);
        concepts = List.copyOf(concepts);
    }

    public TrackPrompts(List<Seed> objects, long generation, Set<Integer> dismissed) {
        this(objects, generation, dismissed, List.of());
    }

    public TrackPrompts(List<Seed> objects, long generation) {
        this(objects, generation, Set.of());
    }

    /** One object's prompt (original pixels) and its revision. */
    public record Seed(ObjectPrompt prompt, long revision) {}
}
