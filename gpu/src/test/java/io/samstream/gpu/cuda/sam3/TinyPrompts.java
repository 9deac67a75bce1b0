package io.samstream.gpu.cuda.sam3;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.gpu.sam3.ExemplarBox;
import io.samstream.gpu.sam3.FixturePrompts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The prompts of SAM 3's tiny fixture as meta.json lists them (the phrase, and for some an exemplar box Meta's outputs
 * were made with), so that every GPU test gives a prompt the same boxes Meta did.
 */
final class TinyPrompts {
    private TinyPrompts() {}

    /** meta.json's {@code prompts} of the fixture folder {@code tiny}. */
    static JsonNode all(Path tiny) {
        try {
            return new ObjectMapper().readTree(tiny.resolve("meta.json").toFile()).get("prompts");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The fixture image's {height, width} (meta.json's {@code image_hw}). */
    static int[] imageHw(Path tiny) {
        try {
            JsonNode hw = new ObjectMapper().readTree(tiny.resolve("meta.json").toFile()).get("image_hw");
            return new int[] {hw.get(0).asInt(), hw.get(1).asInt()};
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The exemplar boxes of prompt {@code i} (none for a phrase alone). */
    static List<ExemplarBox> boxes(Path tiny, int i) {
        return boxes(all(tiny).get(i));
    }

    /** The exemplar boxes of one prompt entry. */
    static List<ExemplarBox> boxes(JsonNode prompt) {
        return FixturePrompts.boxes(prompt);
    }
}
