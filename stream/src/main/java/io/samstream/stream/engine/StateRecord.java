package io.samstream.stream.engine;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdInputStream;
import io.samstream.config.Limits;
import io.samstream.config.StreamSpec;
import io.samstream.stream.track.memory.MemoryTrackerState;
import io.samstream.stream.track.kalman.TrackerState;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Optional;

/**
 * One record of the cluster's state topic (key = stream id): a stream's progress, its tracks and its prompts in
 * force, as {@link ClusterMember} writes it and every engine reads it back. The one validator of that record:
 * {@link #parse} checks it whole, against {@code samstream.limits}, before anything acts on it: the stream it names
 * is its key; its frame is -1 (none published yet) to {@code max-stream-frames}; its prompts have at most
 * {@code max-pending-changes} pending snapshots of at most {@code max-objects-per-stream} objects; its tracks at
 * most {@code max-objects-per-stream}, each mask's size bounded. A record that fails is a {@link ControlRejected}
 * naming the reason; the stream then starts as if it had no state.
 *
 * <p>On the wire the value is the JSON compressed with zstd ({@link #encode}), at most {@code max-state-bytes};
 * an uncompressed JSON value (as earlier versions wrote) is read too.
 *
 * @param engine        the engine that wrote it
 * @param definition    the hash of the stream definition it belongs to
 * @param frame         the last frame published (acknowledged); -1 for none
 * @param ended         a file stream that ended (not started again)
 * @param promptsOffset the offset of the last prompts-topic message applied; -1 for none
 */
public record StateRecord(String stream, String engine, String definition, long frame, long ptsMs, boolean ended,
        long promptsOffset, Optional<PromptsState> prompts, Optional<TrackerState> tracker,
        Optional<MemoryTrackerState> memory) {
    /** The largest JSON a state decompresses to (a compressed record is bounded by max-state-bytes). */
    static final int MAX_JSON_BYTES = 32 << 20;
    /** The values of one track's low-resolution mask at most (SAM's 256 x 256, with room). */
    static final long MAX_MASK_VALUES = 1 << 17;
    /** Ids of ended objects a tracker state may list. */
    static final int MAX_ENDED = 1 << 16;
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    private static final byte[] ZSTD_MAGIC = {(byte) 0x28, (byte) 0xB5, (byte) 0x2F, (byte) 0xFD};

    /** A state's JSON, compressed (zstd, level 3) for the topic. */
    static byte[] encode(ObjectNode state) throws IOException {
        return Zstd.compress(JSON.writeValueAsBytes(state), 3);
    }

    /**
     * Validates one record of the state topic whole.
     *
     * @throws ControlRejected naming why it cannot be used (reason and words)
     */
    public static StateRecord parse(String key, byte[] value, Limits limits) throws ControlRejected {
        if (key == null || !StreamSpec.ID.matcher(key).matches()) {
            throw new ControlRejected(ControlRejected.BAD_KEY, "the key is not a stream id");
        }
        if (value == null) {
            throw new ControlRejected(ControlRejected.MALFORMED, "no value (a tombstone)");
        }
        if (value.length > limits.maxStateBytes()) {
            throw new ControlRejected(ControlRejected.TOO_LARGE, "the value has " + value.length
                    + " bytes, more than samstream.limits.max-state-bytes = " + limits.maxStateBytes());
        }
        JsonNode o;
        try {
            o = JSON.readTree(json(value));
        } catch (IOException e) {
            throw new ControlRejected(ControlRejected.MALFORMED, "not JSON: "
                    + (e instanceof com.fasterxml.jackson.core.JsonProcessingException j ? j.getOriginalMessage()
                            : e.getMessage()));
        }
        if (o == null || !o.isObject()) {
            throw new ControlRejected(ControlRejected.MALFORMED, "the value is not a JSON object");
        }
        String stream = text(o, "stream", 128);
        if (!stream.equals(key)) {
            throw new ControlRejected(ControlRejected.BAD_KEY, "the value is the state of stream '" + stream
                    + "', not of its key's");
        }
        long frame = integer(o, "frame", -1, limits.maxStreamFrames(), ControlRejected.BAD_FRAME,
                "samstream.limits.max-stream-frames");
        long pts = integer(o, "pts_ms", -1, 1L << 53, ControlRejected.MALFORMED, "2^53 ms");
        JsonNode ended = o.get("ended");
        if (ended == null || !ended.isBoolean()) {
            throw new ControlRejected(ControlRejected.MALFORMED, "\"ended\" must be true or false");
        }
        long offset = integer(o, "prompts_offset", -1, Long.MAX_VALUE, ControlRejected.MALFORMED, "a long");
        String engine = text(o, "engine", 249);
        String definition = text(o, "definition", 64);
        Optional<PromptsState> prompts = Optional.empty();
        if (present(o, "prompts")) {
            prompts = Optional.of(PromptsState.fromJson(o.get("prompts"), limits));
        }
        Optional<TrackerState> tracker = Optional.empty();
        if (present(o, "tracker")) {
            JsonNode t = o.get("tracker");
            checkTracker(t, limits);
            tracker = Optional.of(part("tracker", () -> TrackerState.fromJson(t)));
        }
        Optional<MemoryTrackerState> memory = Optional.empty();
        if (present(o, "memory")) {
            JsonNode m = o.get("memory");
            count(m, "objects", limits.maxObjectsPerStream(), ControlRejected.TOO_MANY_OBJECTS, "memory objects");
            countFields(m.get("ended"), MAX_ENDED, "ended memory objects");
            frameOf(m, limits);
            memory = Optional.of(part("memory", () -> MemoryTrackerState.fromJson(m)));
        }
        return new StateRecord(stream, engine, definition, frame, pts, ended.asBoolean(), offset, prompts, tracker,
                memory);
    }

    /** The JSON text of a value: zstd-decompressed (bounded) when it is compressed, else as it is. */
    private static byte[] json(byte[] value) throws ControlRejected {
        if (value.length < 4 || value[0] != ZSTD_MAGIC[0] || value[1] != ZSTD_MAGIC[1] || value[2] != ZSTD_MAGIC[2]
                || value[3] != ZSTD_MAGIC[3]) {
            return value;
        }
        try (InputStream in = new ZstdInputStream(new ByteArrayInputStream(value))) {
            byte[] out = in.readNBytes(MAX_JSON_BYTES + 1);
            if (out.length > MAX_JSON_BYTES) {
                throw new ControlRejected(ControlRejected.TOO_LARGE, "it decompresses to more than " + MAX_JSON_BYTES
                        + " bytes");
            }
            return out;
        } catch (IOException | RuntimeException e) {
            throw new ControlRejected(ControlRejected.MALFORMED, "not a zstd frame: " + e.getMessage());
        }
    }

    /** The shape of a tracker state before it is read: counts and mask sizes bounded, so reading it allocates little. */
    private static void checkTracker(JsonNode t, Limits limits) throws ControlRejected {
        if (!t.isObject()) {
            throw new ControlRejected(ControlRejected.MALFORMED, "\"tracker\" is not an object");
        }
        int tracks = count(t, "tracks", limits.maxObjectsPerStream(), ControlRejected.TOO_MANY_OBJECTS, "tracks");
        int ghosts = t.has("ghosts") ? count(t, "ghosts", limits.maxObjectsPerStream(), ControlRejected.TOO_MANY_OBJECTS,
                "lost tracks") : 0;
        if (tracks + ghosts > limits.maxObjectsPerStream()) {
            throw new ControlRejected(ControlRejected.TOO_MANY_OBJECTS, (tracks + ghosts) + " tracks (live and lost),"
                    + " more than samstream.limits.max-objects-per-stream = " + limits.maxObjectsPerStream());
        }
        countFields(t.get("ended"), MAX_ENDED, "ended tracks");
        frameOf(t, limits);
        for (String field : new String[] {"tracks", "ghosts"}) {
            for (JsonNode n : t.path(field)) {
                JsonNode shape = n.path("logits_shape");
                if (!shape.isArray() || shape.isEmpty() || shape.size() > 4) {
                    throw new ControlRejected(ControlRejected.MALFORMED, "a track's logits_shape is not 1 to 4 sizes");
                }
                long values = 1;
                for (JsonNode d : shape) {
                    if (!d.isIntegralNumber() || d.asLong() < 1 || d.asLong() > MAX_MASK_VALUES) {
                        throw new ControlRejected(ControlRejected.MALFORMED, "a track's logits_shape has size " + d);
                    }
                    values *= d.asLong();
                    if (values > MAX_MASK_VALUES) {
                        throw new ControlRejected(ControlRejected.TOO_LARGE, "a track's mask has more than "
                                + MAX_MASK_VALUES + " values");
                    }
                }
            }
        }
    }

    private static void frameOf(JsonNode part, Limits limits) throws ControlRejected {
        integer(part, "frame", -1, limits.maxStreamFrames(), ControlRejected.BAD_FRAME,
                "samstream.limits.max-stream-frames");
    }

    private static int count(JsonNode o, String field, int max, String reason, String what) throws ControlRejected {
        JsonNode a = o.get(field);
        if (a == null || !a.isArray()) {
            throw new ControlRejected(ControlRejected.MALFORMED, "\"" + field + "\" is not a list");
        }
        if (a.size() > max) {
            throw new ControlRejected(reason, a.size() + " " + what + ", more than "
                    + "samstream.limits.max-objects-per-stream = " + max);
        }
        return a.size();
    }

    private static void countFields(JsonNode o, int max, String what) throws ControlRejected {
        if (o != null && o.size() > max) {
            throw new ControlRejected(ControlRejected.TOO_MANY_OBJECTS, o.size() + " " + what + ", at most " + max);
        }
    }

    private static <T> T part(String field, java.util.function.Supplier<T> read) throws ControlRejected {
        try {
            return read.get();
        } catch (RuntimeException e) {
            throw new ControlRejected(ControlRejected.MALFORMED, "\"" + field + "\": " + e.getMessage());
        }
    }

    private static boolean present(JsonNode o, String field) {
        JsonNode n = o.get(field);
        return n != null && !n.isNull();
    }

    private static String text(JsonNode o, String field, int max) throws ControlRejected {
        JsonNode n = o.get(field);
        if (n == null || !n.isTextual() || n.asText().length() > max) {
            throw new ControlRejected(ControlRejected.MALFORMED, "\"" + field + "\" must be a string of at most " + max
                    + " characters");
        }
        return n.asText();
    }

    private static long integer(JsonNode o, String field, long min, long max, String reason, String bound)
            throws ControlRejected {
        JsonNode n = o.get(field);
        if (n == null || !n.isIntegralNumber() || !n.canConvertToLong()) {
            throw new ControlRejected(ControlRejected.MALFORMED, "\"" + field + "\" must be a whole number");
        }
        long v = n.asLong();
        if (v < min || v > max) {
            throw new ControlRejected(reason, "\"" + field + "\" is " + v + ", outside [" + min + ", " + max + "] ("
                    + bound + ")");
        }
        return v;
    }
}
