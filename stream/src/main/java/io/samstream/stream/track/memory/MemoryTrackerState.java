package io.samstream.stream.track.memory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.stream.track.TrackingState;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a {@link MemoryTracker} hands to the engine that takes its stream over (failover): per object its id, the
 * prompt revision it follows, its box on the last frame it was visible (frame pixels) and how many frames it has
 * been hidden since; the lost objects with the revision they were lost under (also those whose memory the tracker
 * still kept to find them again: that memory does not move, so they stay lost on the next engine until
 * re-prompted); the prompt generation. Not the
 * memory bank itself (megabytes of features per object): the next engine conditions each visible object afresh
 * on its last box, under the same id and revision, so it goes on without being seeded again from its original
 * prompt (see {@link MemoryTracker#restore}).
 *
 * @param frame the frame it was taken after
 */
public record MemoryTrackerState(long frame, long generation, List<ObjectState> objects, Map<Integer, Long> ended)
        implements TrackingState {
    /** The field of a stream's state record that holds it. */
    public static final String KEY = "memory";
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * @param box          {@code [x0, y0, x1, y1]} in frame pixels on its last visible frame; null when it was never
     *                     visible
     * @param hiddenFrames frames in a row it has been hidden (0: visible on the state's frame)
     */
    public record ObjectState(int id, long revision, double[] box, int hiddenFrames) {
        public ObjectState {
            if (id < 0 || hiddenFrames < 0) {
                throw new IllegalArgumentException("object " + id + ": negative id or hidden frames " + hiddenFrames);
            }
            if (box != null && (box.length != 4 || !(box[2] > box[0]) || !(box[3] > box[1])
                    || !Double.isFinite(box[0] + box[1] + box[2] + box[3]))) {
                throw new IllegalArgumentException("object " + id + ": box " + java.util.Arrays.toString(box)
                        + " is not [x0, y0, x1, y1] with x1 > x0 and y1 > y0");
            }
            box = box == null ? null : box.clone();
        }
    }

    public MemoryTrackerState {
        objects = List.copyOf(objects);
        ended = Map.copyOf(ended);
    }

    @Override
    public String key() {
        return KEY;
    }

    @Override
    public List<Integer> ids() {
        return objects.stream().map(ObjectState::id).toList();
    }

    @Override
    public ObjectNode toJson() {
        ObjectNode o = JSON.createObjectNode();
        o.put("frame", frame).put("generation", generation);
        ArrayNode os = o.putArray("objects");
        for (ObjectState s : objects) {
            ObjectNode n = os.addObject().put("id", s.id()).put("revision", s.revision()).put("hidden", s.hiddenFrames());
            if (s.box() != null) {
                ArrayNode b = n.putArray("box");
                for (double v : s.box()) {
                    b.add(v);
                }
            }
        }
        ObjectNode e = o.putObject("ended");
        ended.forEach((id, rev) -> e.put(Integer.toString(id), rev));
        return o;
    }

    /** @throws IllegalArgumentException naming what is wrong, for a state that is not one */
    public static MemoryTrackerState fromJson(JsonNode o) {
        try {
            List<ObjectState> objects = new ArrayList<>();
            for (JsonNode n : o.required("objects")) {
                double[] box = null;
                if (n.has("box")) {
                    JsonNode b = n.required("box");
                    box = new double[b.size()];
                    for (int i = 0; i < box.length; i++) {
                        if (!b.get(i).isNumber()) {
                            throw new IllegalArgumentException("object " + n.path("id").asInt() + ": box value " + b.get(i)
                                    + " is not a number");
                        }
                        box[i] = b.get(i).asDouble();
                    }
                }
                objects.add(new ObjectState(n.required("id").asInt(), n.required("revision").asLong(), box,
                        n.required("hidden").asInt()));
            }
            Map<Integer, Long> ended = new LinkedHashMap<>();
            o.required("ended").fields().forEachRemaining(e -> ended.put(Integer.parseInt(e.getKey()),
                    e.getValue().asLong()));
            return new MemoryTrackerState(o.required("frame").asLong(), o.required("generation").asLong(), objects,
                    ended);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("unreadable memory tracker state: " + e.getMessage(), e);
        }
    }
}
