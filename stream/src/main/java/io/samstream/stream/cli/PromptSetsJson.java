package io.samstream.stream.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.gpu.predict.PromptSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a PROMPTS.json file: a JSON array of prompt sets
 * {@code {"points":[[x,y],..]|null, "labels":[1,0,..]|null, "box":[x0,y0,x1,y1]|null, "multimask":bool}}.
 *
 * <p>Coordinates are original image pixels. {@code labels} may be omitted with points, meaning all
 * foreground; {@code multimask} defaults to false, like the {@code --multimask} flag. Other fields are
 * ignored with a warning. Every error names the file and the prompt set.
 */
final class PromptSetsJson {
    private static final Logger log = LoggerFactory.getLogger(PromptSetsJson.class);
    private static final Set<String> KEYS = Set.of("points", "labels", "box", "multimask");

    private PromptSetsJson() {}

    static List<PromptSet> read(Path file) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(Files.readString(file));
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException(file + ": prompts file not found");
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(file + ": not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": cannot read prompts file: " + e.getMessage());
        }
        if (root == null || !root.isArray()) {
            throw new IllegalArgumentException(file + ": expected a JSON array of prompt sets");
        }
        List<PromptSet> sets = new ArrayList<>();
        for (int i = 0; i < root.size(); i++) {
            try {
                sets.add(parse(root.get(i)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(file + ": prompt set " + i + ": " + e.getMessage());
            }
        }
        if (sets.isEmpty()) {
            throw new IllegalArgumentException(file + ": holds no prompt sets");
        }
        return sets;
    }

    private static PromptSet parse(JsonNode node) {
        if (!node.isObject()) {
            throw new IllegalArgumentException("expected an object {\"points\", \"labels\", \"box\", \"multimask\"}");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            String key = it.next().getKey();
            if (!KEYS.contains(key)) {
                // Files written for other tools may carry extra fields (names, notes): tolerate, but say so.
                log.warn("prompt set field \"{}\" is not used (samstream reads {})", key, KEYS);
            }
        }
        double[][] points = null;
        JsonNode p = node.get("points");
        if (p != null && !p.isNull()) {
            if (!p.isArray()) {
                throw new IllegalArgumentException("\"points\" must be an array of [x, y]");
            }
            points = new double[p.size()][];
            for (int i = 0; i < p.size(); i++) {
                points[i] = numbers(p.get(i), 2, "point " + i);
            }
        }
        int[] labels = null;
        JsonNode l = node.get("labels");
        if (l != null && !l.isNull()) {
            if (!l.isArray()) {
                throw new IllegalArgumentException("\"labels\" must be an array of 0/1");
            }
            labels = new int[l.size()];
            for (int i = 0; i < l.size(); i++) {
                JsonNode v = l.get(i);
                if (!v.isNumber() || v.asDouble() != Math.rint(v.asDouble())) {
                    throw new IllegalArgumentException("label " + i + " must be 0 or 1, got " + v);
                }
                labels[i] = v.asInt();
            }
        } else if (points != null) {
            labels = new int[points.length];
            Arrays.fill(labels, 1);
        }
        double[] box = null;
        JsonNode b = node.get("box");
        if (b != null && !b.isNull()) {
            box = numbers(b, 4, "box");
        }
        JsonNode m = node.get("multimask");
        if (m != null && !m.isNull() && !m.isBoolean()) {
            throw new IllegalArgumentException("\"multimask\" must be true or false, got " + m);
        }
        return new PromptSet(points, labels, box, m != null && m.asBoolean(false));
    }

    private static double[] numbers(JsonNode node, int count, String what) {
        if (node == null || !node.isArray() || node.size() != count) {
            throw new IllegalArgumentException(what + " must be an array of " + count + " numbers, got " + node);
        }
        double[] out = new double[count];
        for (int i = 0; i < count; i++) {
            if (!node.get(i).isNumber()) {
                throw new IllegalArgumentException(what + " must hold numbers, got " + node);
            }
            out[i] = node.get(i).asDouble();
        }
        return out;
    }
}
