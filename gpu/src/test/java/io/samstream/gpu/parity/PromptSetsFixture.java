package io.samstream.gpu.parity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.gpu.predict.PromptSet;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The fixtures' prompts.json (the CLI's format, always complete) as prompt sets. */
final class PromptSetsFixture {
    private PromptSetsFixture() {}

    static List<PromptSet> read(Path file) throws IOException {
        List<PromptSet> sets = new ArrayList<>();
        for (JsonNode s : new ObjectMapper().readTree(file.toFile())) {
            double[][] points = null;
            int[] labels = null;
            if (!s.get("points").isNull()) {
                points = new double[s.get("points").size()][];
                labels = new int[points.length];
                for (int i = 0; i < points.length; i++) {
                    points[i] = new double[] {s.get("points").get(i).get(0).asDouble(), s.get("points").get(i).get(1).asDouble()};
                    labels[i] = s.get("labels").get(i).asInt();
                }
            }
            double[] box = null;
            if (!s.get("box").isNull()) {
                box = new double[4];
                for (int i = 0; i < 4; i++) {
                    box[i] = s.get("box").get(i).asDouble();
                }
            }
            sets.add(new PromptSet(points, labels, box, s.get("multimask").asBoolean()));
        }
        return sets;
    }
}
