package io.samstream.stream.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.config.PromptSpec.ObjectPrompt;
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
     */
    public record Step(long fromFrame, long generation, Map<Integer, Changed> changed, Set<Integer> removed) {
        public Step {
            changed = Collections.unmodifiableMap(new LinkedHashMap<>(changed)); // in the order records list them
            removed = Set.copyOf(removed);
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
            List<Step> steps = new ArrayList<>();
            JsonNode ns = o.required("steps");
            if (ns.size() > StreamPrompts.MAX_PENDING) {
                throw new IllegalArgumentException(ns.size() + " snapshots, at most " + StreamPrompts.MAX_PENDING);
            }
            Step before = null;
            for (JsonNode n : ns) {
                Map<Integer, Changed> changed = new LinkedHashMap<>();
                Set<Integer> removed = new LinkedHashSet<>();
                if (n.required("diff").asBoolean()) {
                    if (before == null) {
                        throw new IllegalArgumentException("the first snapshot cannot be a difference");
                    }
                    changed.putAll(before.changed());
                    removed.addAll(before.removed());
                }
                for (JsonNode p : n.required("set")) {
                    Changed c = changed(p);
                    changed.put(c.prompt().id(), c);
                }
                n.required("unset").forEach(id -> changed.remove(id.asInt()));
                n.required("removed").forEach(id -> removed.add(id.asInt()));
                n.required("unremoved").forEach(id -> removed.remove(id.asInt()));
                JsonNode order = n.get("order");
                if (order != null) {
                    Map<Integer, Changed> ordered = new LinkedHashMap<>();
                    order.forEach(id -> {
                        Changed c = changed.get(id.asInt());
                        if (c == null) {
                            throw new IllegalArgumentException("order names object " + id.asInt() + ", not a run-time one");
                        }
                        ordered.put(id.asInt(), c);
                    });
                    if (ordered.size() != changed.size()) {
                        throw new IllegalArgumentException("order lists " + ordered.size() + " of " + changed.size()
                                + " objects");
                    }
                    changed.clear();
                    changed.putAll(ordered);
                }
                Step s = new Step(n.required("from").asLong(), n.required("generation").asLong(), changed, removed);
                if (before != null && s.fromFrame() <= before.fromFrame()) {
                    throw new IllegalArgumentException("snapshots out of order (frame " + s.fromFrame() + " after "
                            + before.fromFrame() + ")");
                }
                steps.add(s);
                before = s;
            }
            return new PromptsState(o.required("changes").asLong(), steps);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("unreadable prompts state: " + e.getMessage(), e);
        }
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

    private static Changed changed(JsonNode n) {
        double[][] points = null;
        JsonNode pts = n.get("points");
        if (pts != null) {
            if (pts.size() > ObjectPrompt.MAX_POINTS) {
                throw new IllegalArgumentException("object " + n.path("id").asInt() + ": " + pts.size() + " points");
            }
            points = new double[pts.size()][];
            for (int i = 0; i < points.length; i++) {
                points[i] = doubles(pts.get(i));
            }
        }
        JsonNode box = n.get("box");
        return new Changed(new ObjectPrompt(n.required("id").asInt(), points, box == null ? null : doubles(box)),
                n.required("revision").asLong());
    }

    private static double[] doubles(JsonNode a) {
        if (!a.isArray() || a.size() > 4) {
            throw new IllegalArgumentException("a point or box is an array of at most 4 numbers");
        }
        double[] v = new double[a.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = a.get(i).asDouble();
        }
        return v;
    }
}
