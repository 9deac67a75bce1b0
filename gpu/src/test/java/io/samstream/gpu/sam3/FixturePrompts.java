package io.samstream.gpu.sam3;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * The prompts of a SAM 3 fixture as tools/sam3_fixtures/make_sam3_fixtures.py writes them in meta.json: each an
 * object with the phrase ({@code text}) and, for some, exemplar {@code boxes} [[cx, cy, w, h], ...] (normalized) with
 * one boolean in {@code labels} per box (true = positive). Public for the GPU tests, which give a prompt the boxes
 * Meta's outputs were made with.
 */
public final class FixturePrompts {
    private FixturePrompts() {}

    /** The exemplar boxes of one prompt entry of meta.json's {@code prompts} (none for a phrase alone). */
    public static List<ExemplarBox> boxes(JsonNode prompt) {
        List<ExemplarBox> boxes = new ArrayList<>();
        if (prompt.has("boxes")) {
            for (int b = 0; b < prompt.get("boxes").size(); b++) {
                JsonNode box = prompt.get("boxes").get(b);
                boxes.add(new ExemplarBox((float) box.get(0).asDouble(), (float) box.get(1).asDouble(),
                        (float) box.get(2).asDouble(), (float) box.get(3).asDouble(),
                        prompt.get("labels").get(b).asBoolean()));
            }
        }
        return boxes;
    }
}
