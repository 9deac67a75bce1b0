package io.samstream.stream.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.config.Limits;
import io.samstream.config.PromptSpec;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.stream.track.ConceptPrompt;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A stream's run-time prompts as the cluster's state topic carries them, so that the engine taking a
 * stream over goes on with the prompts in force (issue #17): the snapshot in force after a frame and
 * those pending for later frames ({@link StreamPrompts#export}), each as what differs from the
 * configured prompts (objects added or updated with their revisions, configured and discovered objects
 * removed). In JSON each step after the first holds only what differs from the step before it, so a
 * stream with many pending changes costs their size, not a copy of every object per change.
 *
 * @param changes the number of the last change (the next one gets a higher revision)
 * @param steps   the snapshot in force first, then the pending ones, ordered by {@code fromFrame}
 */
public record PromptsState(long changes, List<Step> steps) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public PromptsState {
        steps = List.copyOf(steps);
        if (steps.isEmpty()) {
            throw new IllegalArgumentException("prompts state without a snapshot");
        }
    }

    /**
     * One snapshot.
     *
     * @param fromFrame  the first frame it applies to
     * @param generation the reset it descends from
     * @param changed    objects added or updated at run time, with the revision of the change that made each
     * @param removed    configured objects removed at run time, and removed discovered ones
     * @param concepts   the concepts looked for (SAM 3), when not the configured ones; null: the configured ones
     */
    public record Step(long fromFrame, long generation, Map<Integer, Changed> changed, Set<Integer> removed,
            List<ConceptPrompt> concepts) {
        public Step {
            changed = Collections.unmodifiableMap(new LinkedHashMap<>(changed)); // in the order records list them
            removed = Set.copyOf(removed);
            concepts = concepts == null ? null : List.copyOf(concepts);
        }

        /** The configured concepts. */
        public Step(long fromFrame, long generation, Map<Integer, Changed> changed, Set<Integer> removed) {
            this(fromFrame, generation, changed, removed, null);
        }
    }

    /** An object's prompt and the revision it got. */
    public record Changed(ObjectPrompt prompt, long revision) {}

    ObjectNode toJson() {
        ObjectNode o = JSON.createObjectNode();
        o.put("changes", changes);
        ArrayNode out = o.putArray("steps");
        Step before = null;
        for (Step s : steps) {
            // Against the step before when it is of the same generation, else against the configured prompts.
            Step base = before != null && before.generation() == s.generation() ? before : null;
            ObjectNode n = out.addObject();
            n.put("from", s.fromFrame()).put("generation", s.generation()).put("diff", base != null);
            ArrayNode set = n.putArray("set");
            s.changed().forEach((id, c) -> {
                Changed was = base == null ? null : base.changed().get(id);
                if (was == null || was.revision() != c.revision()) { // a revision names one change
                    set.add(prompt(c));
                }
            });
            ArrayNode unset = n.putArray("unset");
            ArrayNode removed = n.putArray("removed");
            ArrayNode unremoved = n.putArray("unremoved");
            if (base != null) {
                base.changed().keySet().stream().filter(id -> !s.changed().containsKey(id)).forEach(unset::add);
                base.removed().stream().filter(id -> !s.removed().contains(id)).forEach(unremoved::add);
            }
            s.removed().stream().filter(id -> base == null || !base.removed().contains(id)).forEach(removed::add);
            if (s.concepts() != null) { // whole: a few phrases (an engine without concepts skips the field)
                ArrayNode concepts = n.putArray("concepts");
                for (ConceptPrompt c : s.concepts()) {
                    ObjectNode cn = concepts.addObject().put("text", c.text());
                    if (!c.boxes().isEmpty()) {
                        ArrayNode boxes = cn.putArray("boxes");
                        for (ConceptPrompt.Box b : c.boxes()) {
                            boxes.addArray().add(b.x0()).add(b.y0()).add(b.x1()).add(b.y1()).add(b.positive() ? 1 : 0);
                        }
                    }
                }
            }
            if (base != null && !List.copyOf(s.changed().keySet()).equals(orderAfter(base, s))) {
                ArrayNode order = n.putArray("order"); // an object removed and added again comes last
                s.changed().keySet().forEach(order::add);
            }
            before = s;
        }
        return o;
    }

    /** @throws IllegalArgumentException naming what is wrong, for a state this version cannot read */
    static PromptsState fromJson(JsonNode o) {
        try {
            return fromJson(o, Limits.DEFAULTS);
        } catch (ControlRejected e) {
            throw new IllegalArgumentException("unreadable prompts state: " + e.getMessage(), e);
        }
    }

    /**
     * Reads and validates a state's prompts whole ({@link StateRecord}): at most {@code max-pending-changes}
     * snapshots after the one in force, each of at most {@code max-objects-per-stream} run-time objects, frames
     * within {@code max-stream-frames}, every number of its type.
     *
     * @throws ControlRejected naming what is wrong
     */
    static PromptsState fromJson(JsonNode o, Limits limits) throws ControlRejected {
        if (o == null || !o.isObject()) {
            throw malformed("\"prompts\" is not an object");
        }
        long changes = whole(o, "changes", 0, Long.MAX_VALUE);
        JsonNode ns = o.get("steps");
        if (ns == null || !ns.isArray() || ns.isEmpty()) {
            throw malformed("prompts: \"steps\" is not a non-empty list");
        }
        if (ns.size() > limits.maxPendingChanges() + 1) {
            throw new ControlRejected(ControlRejected.TOO_MANY_PENDING, "prompts: " + ns.size() + " snapshots, at most "
                    + (limits.maxPendingChanges() + 1) + " (samstream.limits.max-pending-changes + the one in force)");
        }
        int maxIds = StateRecord.MAX_ENDED;
        List<Step> steps = new ArrayList<>();
        Step before = null;
        for (JsonNode n : ns) {
            if (!n.isObject()) {
                throw malformed("prompts: a step is not an object");
            }
            Map<Integer, Changed> changed = new LinkedHashMap<>();
            Set<Integer> removed = new LinkedHashSet<>();
            JsonNode diff = n.get("diff");
            if (diff == null || !diff.isBoolean()) {
                throw malformed("prompts: \"diff\" must be true or false");
            }
            if (diff.asBoolean()) {
                if (before == null) {
                    throw malformed("prompts: the first snapshot cannot be a difference");
                }
                changed.putAll(before.changed());
                removed.addAll(before.removed());
            }
            for (JsonNode p : list(n, "set", limits.maxObjectsPerStream())) {
                Changed c = changed(p);
                changed.put(c.prompt().id(), c);
            }
            for (int id : ids(n, "unset", maxIds)) {
                changed.remove(id);
            }
            removed.addAll(ids(n, "removed", maxIds));
            ids(n, "unremoved", maxIds).forEach(removed::remove);
            if (n.has("order")) {
                Map<Integer, Changed> ordered = new LinkedHashMap<>();
                for (int id : ids(n, "order", limits.maxObjectsPerStream())) {
                    Changed c = changed.get(id);
                    if (c == null) {
                        throw malformed("prompts: order names object " + id + ", not a run-time one");
                    }
                    ordered.put(id, c);
                }
                if (ordered.size() != changed.size()) {
                    throw malformed("prompts: order lists " + ordered.size() + " of " + changed.size() + " objects");
                }
                changed.clear();
                changed.putAll(ordered);
            }
            if (changed.size() > limits.maxObjectsPerStream()) {
                throw new ControlRejected(ControlRejected.TOO_MANY_OBJECTS, "prompts: " + changed.size()
                        + " run-time objects, more than samstream.limits.max-objects-per-stream = "
                        + limits.maxObjectsPerStream());
            }
            if (removed.size() > maxIds) {
                throw new ControlRejected(ControlRejected.TOO_MANY_OBJECTS, "prompts: " + removed.size()
                        + " removed objects, at most " + maxIds);
            }
            long from = n.get("from") != null && n.get("from").isIntegralNumber() && n.get("from").canConvertToLong()
                    ? n.get("from").asLong() : Long.MIN_VALUE;
            if (from < 0 || from > limits.maxStreamFrames()) {
                throw new ControlRejected(ControlRejected.BAD_FRAME, "prompts: a snapshot's \"from\" is "
                        + LogSafe.of(n.get("from")) + ", outside [0, " + limits.maxStreamFrames()
                        + "] (samstream.limits.max-stream-frames)");
            }
            Step s = new Step(from, whole(n, "generation", 0, changes), changed, removed, concepts(n, limits));
            if (before != null && s.fromFrame() <= before.fromFrame()) {
                throw malformed("prompts: snapshots out of order (frame " + s.fromFrame() + " after "
                        + before.fromFrame() + ")");
            }
            steps.add(s);
            before = s;
        }
        return new PromptsState(changes, steps);
    }

    /** A step's concepts: null when it has none of its own (the configured ones). */
    private static List<ConceptPrompt> concepts(JsonNode step, Limits limits) throws ControlRejected {
        JsonNode a = step.get("concepts");
        if (a == null || a.isNull()) {
            return null;
        }
        if (!a.isArray() || a.size() > limits.maxConceptsPerStream()) {
            throw new ControlRejected(ControlRejected.TOO_MANY_OBJECTS, "prompts: \"concepts\" is not a list of at"
                    + " most " + limits.maxConceptsPerStream() + " concepts (samstream.limits.max-concepts-per-stream)");
        }
        List<ConceptPrompt> out = new ArrayList<>();
        for (JsonNode c : a) {
            JsonNode text = c.get("text");
            if (!c.isObject() || text == null || !text.isTextual()
                    || limits.checkConcept(text.asText()) != null) {
                throw malformed("prompts: a concept is " + LogSafe.of(c) + ", expected {\"text\", \"boxes\"?} within"
                        + " samstream.limits.max-concept-chars");
            }
            List<ConceptPrompt.Box> boxes = new ArrayList<>();
            JsonNode bs = c.get("boxes");
            if (bs != null && (!bs.isArray() || bs.size() > ConceptPrompt.MAX_BOXES)) {
                throw malformed("prompts: concept boxes are not a list of at most " + ConceptPrompt.MAX_BOXES);
            }
            try {
                if (bs != null) {
                    for (JsonNode b : bs) {
                        double[] v = doubles(b, 5);
                        if (v.length != 5) {
                            throw malformed("prompts: an exemplar box is [x0, y0, x1, y1, label]");
                        }
                        boxes.add(new ConceptPrompt.Box(v[0], v[1], v[2], v[3], v[4] == 1));
                    }
                }
                out.add(new ConceptPrompt(PromptSpec.concept(text.asText()), boxes));
            } catch (IllegalArgumentException e) {
                throw malformed("prompts: " + e.getMessage());
            }
        }
        return out;
    }

    private static ControlRejected malformed(String what) {
        return new ControlRejected(ControlRejected.MALFORMED, what);
    }

    private static long whole(JsonNode o, String field, long min, long max) throws ControlRejected {
        JsonNode n = o.get(field);
        if (n == null || !n.isIntegralNumber() || !n.canConvertToLong() || n.asLong() < min || n.asLong() > max) {
            throw malformed("prompts: \"" + field + "\" is " + LogSafe.of(n) + ", expected a whole number in [" + min
                    + ", " + max + "]");
        }
        return n.asLong();
    }

    private static JsonNode list(JsonNode o, String field, int max) throws ControlRejected {
        JsonNode a = o.get(field);
        if (a == null || !a.isArray()) {
            throw malformed("prompts: \"" + field + "\" is not a list");
        }
        if (a.size() > max) {
            throw new ControlRejected(ControlRejected.TOO_MANY_OBJECTS, "prompts: \"" + field + "\" lists " + a.size()
                    + " objects, at most " + max);
        }
        return a;
    }

    private static List<Integer> ids(JsonNode o, String field, int max) throws ControlRejected {
        List<Integer> out = new ArrayList<>();
        for (JsonNode id : list(o, field, max)) {
            if (!id.isIntegralNumber() || !id.canConvertToInt() || id.asInt() < 0) {
                throw malformed("prompts: \"" + field + "\" holds " + LogSafe.of(id) + ", not an object id");
            }
            out.add(id.asInt());
        }
        return out;
    }

    /** The order of run-time objects that reading {@code s} as a difference from {@code base} gives. */
    private static List<Integer> orderAfter(Step base, Step s) {
        LinkedHashMap<Integer, Boolean> keys = new LinkedHashMap<>();
        base.changed().keySet().stream().filter(s.changed()::containsKey).forEach(id -> keys.put(id, true));
        s.changed().keySet().forEach(id -> keys.put(id, true));
        return List.copyOf(keys.keySet());
    }

    private static ObjectNode prompt(Changed c) {
        ObjectNode n = JSON.createObjectNode();
        ObjectPrompt p = c.prompt();
        n.put("id", p.id()).put("revision", c.revision());
        if (p.points() != null) {
            ArrayNode pts = n.putArray("points");
            for (double[] pt : p.points()) {
                ArrayNode a = pts.addArray();
                for (double v : pt) {
                    a.add(v);
                }
            }
        }
        if (p.box() != null) {
            ArrayNode b = n.putArray("box");
            for (double v : p.box()) {
                b.add(v);
            }
        }
        return n;
    }

    private static Changed changed(JsonNode n) throws ControlRejected {
        if (!n.isObject()) {
            throw malformed("prompts: an object's prompt is not an object");
        }
        JsonNode id = n.get("id");
        if (id == null || !id.isIntegralNumber() || !id.canConvertToInt()) {
            throw malformed("prompts: an object's \"id\" is " + LogSafe.of(id));
        }
        double[][] points = null;
        JsonNode pts = n.get("points");
        if (pts != null) {
            if (!pts.isArray() || pts.size() > ObjectPrompt.MAX_POINTS) {
                throw malformed("prompts: object " + id.asInt() + ": \"points\" is not a list of at most "
                        + ObjectPrompt.MAX_POINTS + " points");
            }
            points = new double[pts.size()][];
            for (int i = 0; i < points.length; i++) {
                points[i] = doubles(pts.get(i), 3);
            }
        }
        JsonNode box = n.get("box");
        try {
            return new Changed(new ObjectPrompt(id.asInt(), points, box == null ? null : doubles(box, 4)),
                    whole(n, "revision", 0, Long.MAX_VALUE));
        } catch (IllegalArgumentException e) {
            throw malformed("prompts: " + e.getMessage());
        }
    }

    private static double[] doubles(JsonNode a, int max) throws ControlRejected {
        if (!a.isArray() || a.size() > max) {
            throw malformed("prompts: a point or box is an array of at most " + max + " numbers");
        }
        double[] v = new double[a.size()];
        for (int i = 0; i < v.length; i++) {
            if (!a.get(i).isNumber() || !Double.isFinite(a.get(i).asDouble()) || a.get(i).asDouble() < 0) {
                throw malformed("prompts: a coordinate is " + LogSafe.of(a.get(i)) + ", not a finite number >= 0");
            }
            v[i] = a.get(i).asDouble();
        }
        return v;
    }
}
