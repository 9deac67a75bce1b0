package io.samstream.stream.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.gpu.predict.PromptSet;
import io.samstream.stream.engine.LogSafe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a PROMPTS.json file: a JSON array of prompt sets
 * {@code {"points":[[x,y(,label)],..]|null, "labels":[1,0,..]|null, "box":[x0,y0,x1,y1]|null, "multimask":bool}}.
 *
 * <p>Coordinates are original image pixels. A point's label is its third number (as in the configuration
 * and the prompts topic) or the matching entry of {@code labels} (not both); without either it is 1,
 * foreground. {@code multimask} defaults to false, like the {@code --multimask} flag. Other fields are
 * ignored with a warning. At most {@link #MAX_SETS} sets of {@link #MAX_POINTS} points each, in a file of at
 * most {@link #MAX_FILE_BYTES}. Every error names the file and the prompt set.
 */
final class PromptSetsJson {
    private static final Logger log = LoggerFactory.getLogger(PromptSetsJson.class);
    private static final Set<String> KEYS = Set.of("points", "labels", "box", "multimask");
    /** Prompt sets per file: each is decoded and its masks kept until written. */
    static final int MAX_SETS = 256;
    /** Points per prompt set: the CUDA mask decoder's bound (64 sparse tokens, less a box's corners). */
    static final int MAX_POINTS = ObjectPrompt.MAX_POINTS;
    /** The largest file read (MAX_SETS full sets take well under 1 MiB). */
    static final long MAX_FILE_BYTES = 4L << 20;

    private PromptSetsJson() {}

    static List<PromptSet> read(Path file) {
        JsonNode root;
        try {
            long size = Files.size(file);
            if (size > MAX_FILE_BYTES) {
                throw new IllegalArgumentException(file + ": the prompts file has " + size + " bytes, at most "
                        + MAX_FILE_BYTES + " are read");
            }
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
        if (root.size() > MAX_SETS) {
            throw new IllegalArgumentException(file + ": holds " + root.size() + " prompt sets, at most " + MAX_SETS
                    + " are allowed");
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
                log.warn("prompt set field \"{}\" is not used (samstream reads {})", LogSafe.of(key), KEYS);
            }
        }
        double[][] points = null;
        int[] inline = null; // labels given as the points' third numbers (-1: none)
        boolean anyInline = false;
        JsonNode p = node.get("points");
        if (p != null && !p.isNull()) {
            if (!p.isArray()) {
                throw new IllegalArgumentException("\"points\" must be an array of [x, y] or [x, y, label]");
            }
            if (p.size() > MAX_POINTS) {
                throw new IllegalArgumentException("has " + p.size() + " points, at most " + MAX_POINTS
                        + " are allowed");
            }
            points = new double[p.size()][];
            inline = new int[p.size()];
            for (int i = 0; i < p.size(); i++) {
                JsonNode pt = p.get(i);
                int n = pt != null && pt.isArray() && pt.size() == 3 ? 3 : 2;
                double[] xyl = numbers(pt, n, "point " + i, "[x, y] or [x, y, label]");
                points[i] = new double[] {xyl[0], xyl[1]};
                inline[i] = n == 3 ? label(xyl[2], "point " + i + ": the label") : -1;
                anyInline |= n == 3;
            }
        }
        int[] labels = null;
        JsonNode l = node.get("labels");
        if (l != null && !l.isNull()) {
            if (!l.isArray()) {
                throw new IllegalArgumentException("\"labels\" must be an array of 0/1");
            }
            if (anyInline) {
                throw new IllegalArgumentException("labels are given in the points ([x, y, label]) and in "
                        + "\"labels\": give them one way");
            }
            if (l.size() > MAX_POINTS) {
                throw new IllegalArgumentException("has " + l.size() + " labels, at most " + MAX_POINTS
                        + " are allowed");
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
            for (int i = 0; i < labels.length; i++) {
                labels[i] = inline[i] >= 0 ? inline[i] : 1;
            }
        }
        double[] box = null;
        JsonNode b = node.get("box");
        if (b != null && !b.isNull()) {
            box = numbers(b, 4, "box", "an array of 4 numbers");
        }
        JsonNode m = node.get("multimask");
        if (m != null && !m.isNull() && !m.isBoolean()) {
            throw new IllegalArgumentException("\"multimask\" must be true or false, got " + m);
        }
        return new PromptSet(points, labels, box, m != null && m.asBoolean(false));
    }

    private static int label(double v, String what) {
        if (v != 0 && v != 1) {
            throw new IllegalArgumentException(what + " must be 0 or 1, got " + v);
        }
        return (int) v;
    }

    private static double[] numbers(JsonNode node, int count, String what, String expected) {
        if (node == null || !node.isArray() || node.size() != count) {
            throw new IllegalArgumentException(what + " must be " + expected + ", got " + node);
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
