package io.samstream.stream.engine;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.config.PromptSpec;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.stream.track.ConceptPrompt;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;

/**
 * One message of the prompts topic: value = UTF-8 JSON
 * {@code {"stream","op":"add|update|remove|reset","object","points":[[x,y,label]],"box":[x0,y0,x1,y1],"frame"?}},
 * or for SAM 3's concepts {@code {"stream","op":"concept","text":"forklift","boxes"?:[[x0,y0,x1,y1,label?]],
 * "frame"?}} and {@code {"stream","op":"remove-concept","text":"forklift"}}; key = stream id (optional; when present
 * it must name the same stream). Unknown fields are ignored.
 *
 * @param stream  the stream it changes
 * @param op      what it does
 * @param object  the object id ({@code -1} for reset and the concept ops, which have none)
 * @param prompt  the new prompt of add and update (null for the others)
 * @param frame   the first frame it applies to; empty: from the next frame ("now")
 * @param concept the concept of concept and remove-concept (no boxes for the latter); null for the others
 */
public record PromptMessage(String stream, Op op, int object, ObjectPrompt prompt, OptionalLong frame,
        ConceptPrompt concept) {
    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * The largest message value read by default (samstream.limits.max-prompt-bytes; a valid one is well under
     * 4 KiB); larger ones are rejected unparsed.
     */
    public static final int MAX_BYTES = io.samstream.config.Limits.DEFAULTS.maxPromptBytes();

    /** The operations of the prompts topic. */
    public enum Op {
        /** A new object (its id must not exist yet). */
        ADD,
        /** Replaces an existing object's prompt. */
        UPDATE,
        /** Drops an object. */
        REMOVE,
        /** Back to the stream's configured prompts. */
        RESET,
        /** A new concept to look for (SAM 3): a noun phrase, optionally with exemplar boxes. */
        CONCEPT,
        /** Stops looking for a concept: its objects end. */
        REMOVE_CONCEPT;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        /** Whether it is one of SAM 3's concept ops. */
        public boolean isConcept() {
            return this == CONCEPT || this == REMOVE_CONCEPT;
        }
    }

    /** An object op or a reset. */
    public PromptMessage(String stream, Op op, int object, ObjectPrompt prompt, OptionalLong frame) {
        this(stream, op, object, prompt, frame, null);
    }

    /** Parses and validates a record's key and value; the exception says why it is rejected. */
    public static PromptMessage parse(String key, byte[] value) throws PromptRejected {
        return parse(key, value, MAX_BYTES);
    }

    /** As {@link #parse(String, byte[])}, reading values of at most {@code maxBytes}. */
    public static PromptMessage parse(String key, byte[] value, int maxBytes) throws PromptRejected {
        if (value == null) {
            throw new PromptRejected(PromptRejected.MALFORMED_JSON, "empty value (a tombstone)");
        }
        if (value.length > maxBytes) {
            throw tooLarge(value.length + " bytes", maxBytes);
        }
        return parse(key, new String(value, StandardCharsets.UTF_8), maxBytes);
    }

    public static PromptMessage parse(String key, String value) throws PromptRejected {
        return parse(key, value, MAX_BYTES);
    }

    private static PromptMessage parse(String key, String value, int maxBytes) throws PromptRejected {
        if (value.length() > maxBytes) { // chars <= UTF-8 bytes
            throw tooLarge(value.length() + " characters", maxBytes);
        }
        JsonNode root;
        try {
            root = JSON.readTree(value);
        } catch (JsonProcessingException e) {
            throw new PromptRejected(PromptRejected.MALFORMED_JSON, "not JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject()) {
            throw new PromptRejected(PromptRejected.MALFORMED_JSON, "the value is not a JSON object");
        }
        JsonNode s = root.get("stream");
        if (s == null || s.isNull() || !s.isTextual() || s.asText().isBlank()) {
            throw new PromptRejected(PromptRejected.MISSING_STREAM, "\"stream\" (a stream id string) is missing");
        }
        String stream = s.asText();
        if (key != null && !key.equals(stream)) {
            throw new PromptRejected(PromptRejected.KEY_MISMATCH, "the key '" + LogSafe.of(key)
                    + "' is not the message's stream '" + LogSafe.of(stream) + "'");
        }
        JsonNode o = root.get("op");
        Op op = null;
        if (o != null && o.isTextual()) {
            for (Op candidate : Op.values()) {
                if (candidate.wireName().equals(o.asText())) {
                    op = candidate;
                }
            }
        }
        if (op == null) {
            throw new PromptRejected(PromptRejected.UNKNOWN_OP, "\"op\" is " + (o == null ? "missing" : LogSafe.of(o))
                    + ", expected add, update, remove, reset, concept or remove-concept");
        }
        OptionalLong frame = OptionalLong.empty();
        JsonNode f = root.get("frame");
        if (f != null && !f.isNull()) {
            if (!f.isIntegralNumber() || !f.canConvertToLong() || f.asLong() < 0) {
                throw new PromptRejected(PromptRejected.BAD_FRAME, "\"frame\" must be a frame number (0 or more), got " + LogSafe.of(f));
            }
            frame = OptionalLong.of(f.asLong());
        }
        if (op == Op.RESET) {
            return new PromptMessage(stream, op, -1, null, frame);
        }
        if (op.isConcept()) {
            String text = conceptText(root.get("text"), op);
            List<ConceptPrompt.Box> boxes = op == Op.CONCEPT ? exemplars(root.get("boxes")) : List.of();
            return new PromptMessage(stream, op, -1, null, frame, new ConceptPrompt(text, boxes));
        }
        JsonNode id = root.get("object");
        if (id == null || id.isNull()) {
            throw new PromptRejected(PromptRejected.MISSING_OBJECT, "\"object\" (an object id) is missing");
        }
        if (!id.isIntegralNumber() || !id.canConvertToInt() || id.asInt() < 0) {
            throw new PromptRejected(PromptRejected.MISSING_OBJECT, "\"object\" must be an object id (0 or more), got "
                    + LogSafe.of(id));
        }
        int object = id.asInt();
        // Discovered objects (ids from DISCOVERED_ID_BASE up) can be removed; only prompted ones are given.
        if (op == Op.REMOVE) {
            return new PromptMessage(stream, op, object, null, frame);
        }
        if (object >= PromptSpec.DISCOVERED_ID_BASE) {
            throw new PromptRejected(PromptRejected.MISSING_OBJECT, op.wireName() + ": \"object\" must be 0 to "
                    + (PromptSpec.DISCOVERED_ID_BASE - 1) + " (ids from " + PromptSpec.DISCOVERED_ID_BASE
                    + " up are discovered objects: they can be removed, not added or updated), got " + object);
        }
        double[][] points = points(root.get("points"), op, object);
        double[] box = box(root.get("box"));
        if (points == null && box == null) {
            throw new PromptRejected(PromptRejected.MISSING_PROMPT, op.wireName() + " of object " + object
                    + " needs \"points\" or a \"box\"");
        }
        return new PromptMessage(stream, op, object, new ObjectPrompt(object, points, box), frame);
    }

    /**
     * The message's value as the topic carries it, what {@link #parse} reads back: {@code stream}, {@code op},
     * {@code object} (not for reset), {@code points} as {@code [x, y, label]} and {@code box} when given,
     * {@code frame} when given.
     */
    public String toJson() {
        ObjectNode root = JSON.createObjectNode();
        root.put("stream", stream);
        root.put("op", op.wireName());
        if (op != Op.RESET && !op.isConcept()) {
            root.put("object", object);
        }
        if (concept != null) {
            root.put("text", concept.text());
            if (!concept.boxes().isEmpty()) {
                ArrayNode boxes = root.putArray("boxes");
                for (ConceptPrompt.Box b : concept.boxes()) {
                    ArrayNode box = boxes.addArray();
                    number(box, b.x0());
                    number(box, b.y0());
                    number(box, b.x1());
                    number(box, b.y1());
                    box.add(b.positive() ? 1 : 0);
                }
            }
        }
        if (prompt != null && prompt.points() != null) {
            ArrayNode points = root.putArray("points");
            for (int i = 0; i < prompt.points().length; i++) {
                ArrayNode point = points.addArray();
                number(point, prompt.points()[i][0]);
                number(point, prompt.points()[i][1]);
                point.add(prompt.label(i));
            }
        }
        if (prompt != null && prompt.box() != null) {
            ArrayNode box = root.putArray("box");
            for (double v : prompt.box()) {
                number(box, v);
            }
        }
        frame.ifPresent(f -> root.put("frame", f));
        return root.toString();
    }

    /** Whole pixel coordinates as integers ({@code 40}, not {@code 40.0}); others as they are. */
    private static void number(ArrayNode array, double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            array.add((long) v);
        } else {
            array.add(v);
        }
    }

    private static PromptRejected tooLarge(String size, int maxBytes) {
        return new PromptRejected(PromptRejected.TOO_LARGE, "the message has " + size + ", at most " + maxBytes
                + " bytes are read (samstream.limits.max-prompt-bytes)");
    }

    /** A concept op's noun phrase: a string, not blank, printable, at most PromptSpec's longest concept. */
    private static String conceptText(JsonNode t, Op op) throws PromptRejected {
        if (t == null || !t.isTextual() || t.asText().isBlank()) {
            throw new PromptRejected(PromptRejected.BAD_CONCEPT, op.wireName() + " needs \"text\", a noun phrase such"
                    + " as \"person\", got " + (t == null ? "none" : LogSafe.of(t)));
        }
        try {
            return PromptSpec.concept(t.asText());
        } catch (IllegalArgumentException e) {
            throw new PromptRejected(PromptRejected.BAD_CONCEPT, op.wireName() + ": " + LogSafe.of(e.getMessage()));
        }
    }

    /** A concept's exemplar boxes: [x0, y0, x1, y1] or with a fifth number, 1 (an example) or 0 (a counter-example). */
    private static List<ConceptPrompt.Box> exemplars(JsonNode n) throws PromptRejected {
        if (n == null || n.isNull()) {
            return List.of();
        }
        if (!n.isArray()) {
            throw new PromptRejected(PromptRejected.BAD_BOX, "\"boxes\" must be a list of [x0, y0, x1, y1, label?]");
        }
        if (n.size() > ConceptPrompt.MAX_BOXES) {
            throw new PromptRejected(PromptRejected.BAD_BOX, "a concept has " + n.size() + " exemplar boxes, at most "
                    + ConceptPrompt.MAX_BOXES);
        }
        List<ConceptPrompt.Box> out = new ArrayList<>(n.size());
        for (int i = 0; i < n.size(); i++) {
            JsonNode b = n.get(i);
            if (!b.isArray() || (b.size() != 4 && b.size() != 5)) {
                throw new PromptRejected(PromptRejected.BAD_BOX, "exemplar box " + i + " is " + LogSafe.of(b)
                        + ", expected [x0, y0, x1, y1] or [x0, y0, x1, y1, label]");
            }
            double[] c = new double[4];
            for (int k = 0; k < 4; k++) {
                c[k] = coordinate(b.get(k), "exemplar box " + i);
            }
            if (c[2] <= c[0] || c[3] <= c[1]) {
                throw new PromptRejected(PromptRejected.BAD_BOX, "exemplar box " + i + " " + LogSafe.of(b)
                        + ": corners swapped or empty, expected x1 > x0 and y1 > y0");
            }
            boolean positive = true;
            if (b.size() == 5) {
                JsonNode l = b.get(4);
                if (!l.isNumber() || (l.asDouble() != 0 && l.asDouble() != 1)) {
                    throw new PromptRejected(PromptRejected.BAD_LABEL, "exemplar box " + i + ": the label is "
                            + LogSafe.of(l) + ", expected 1 (an example) or 0 (a counter-example)");
                }
                positive = l.asDouble() == 1;
            }
            out.add(new ConceptPrompt.Box(c[0], c[1], c[2], c[3], positive));
        }
        return out;
    }

    private static double[][] points(JsonNode n, Op op, int object) throws PromptRejected {
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isArray()) {
            throw new PromptRejected(PromptRejected.BAD_POINT, "\"points\" must be a list of [x, y, label]");
        }
        if (n.isEmpty()) {
            return null;
        }
        if (n.size() > ObjectPrompt.MAX_POINTS) {
            throw new PromptRejected(PromptRejected.TOO_MANY_POINTS, op.wireName() + " of object " + object + " has "
                    + n.size() + " points, at most " + ObjectPrompt.MAX_POINTS + " are allowed");
        }
        double[][] points = new double[n.size()][];
        for (int i = 0; i < n.size(); i++) {
            JsonNode p = n.get(i);
            if (!p.isArray() || (p.size() != 2 && p.size() != 3)) {
                throw new PromptRejected(PromptRejected.BAD_POINT, "point " + i + " is " + LogSafe.of(p) + ", expected [x, y, label]");
            }
            double x = coordinate(p.get(0), "point " + i);
            double y = coordinate(p.get(1), "point " + i);
            double label = 1;
            if (p.size() == 3) {
                JsonNode l = p.get(2);
                if (!l.isNumber() || (l.asDouble() != 0 && l.asDouble() != 1)) {
                    throw new PromptRejected(PromptRejected.BAD_LABEL, "point " + i + ": the label is " + LogSafe.of(l)
                            + ", expected 1 (foreground) or 0 (background)");
                }
                label = l.asDouble();
            }
            points[i] = new double[] {x, y, label};
        }
        return points;
    }

    private static double[] box(JsonNode n) throws PromptRejected {
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isArray() || n.size() != 4) {
            throw new PromptRejected(PromptRejected.BAD_BOX, "\"box\" is " + LogSafe.of(n) + ", expected [x0, y0, x1, y1]");
        }
        double[] b = new double[4];
        for (int i = 0; i < 4; i++) {
            b[i] = coordinate(n.get(i), "box");
        }
        if (b[2] <= b[0] || b[3] <= b[1]) {
            throw new PromptRejected(PromptRejected.BAD_BOX, "box " + LogSafe.of(n)
                    + ": corners swapped or empty, expected x1 > x0 and y1 > y0");
        }
        return b;
    }

    private static double coordinate(JsonNode v, String where) throws PromptRejected {
        // Jackson reads NaN / Infinity only as strings (or with a non-default feature): both end up here.
        if (v == null || !v.isNumber() || !Double.isFinite(v.asDouble())) {
            throw new PromptRejected(PromptRejected.BAD_COORDINATE, where + ": the coordinate " + LogSafe.of(v)
                    + " is not a finite number");
        }
        if (v.asDouble() < 0) {
            throw new PromptRejected(PromptRejected.BAD_COORDINATE, where + ": the coordinate " + LogSafe.of(v) + " is negative");
        }
        return v.asDouble();
    }
}
