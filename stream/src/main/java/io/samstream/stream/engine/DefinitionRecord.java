package io.samstream.stream.engine;

import io.samstream.config.ConfigException;
import io.samstream.config.Limits;
import io.samstream.config.StreamDefaults;
import io.samstream.config.StreamSpec;
import io.samstream.config.StreamSpecs;
import java.nio.charset.StandardCharsets;

/**
 * The one validator of a streams-topic record (key = stream id, value = a stream definition's JSON), shared by
 * every path that reads that topic ({@link StreamsTopicWatcher}, {@link ClusterMember}): the key a stream id, the
 * value at most {@code max-definition-bytes}, a valid definition ({@link StreamSpecs#fromJson}) within
 * {@code max-objects-per-stream}. A tombstone (null value) is no definition: callers remove the stream.
 */
public final class DefinitionRecord {
    private DefinitionRecord() {}

    /** The definition a record gives, whole and within the limits. */
    public static StreamSpec parse(String key, byte[] value, StreamDefaults defaults, Limits limits)
            throws ControlRejected {
        if (key == null || !StreamSpec.ID.matcher(key).matches()) {
            throw new ControlRejected(ControlRejected.BAD_KEY, "the key is not a valid stream id (1-128 of A-Z a-z"
                    + " 0-9 . _ -, starting with a letter or digit)");
        }
        if (value == null) {
            throw new ControlRejected(ControlRejected.MALFORMED, "no value (a tombstone removes a stream)");
        }
        if (value.length > limits.maxDefinitionBytes()) {
            throw new ControlRejected(ControlRejected.TOO_LARGE, "the definition has " + value.length
                    + " bytes, more than samstream.limits.max-definition-bytes = " + limits.maxDefinitionBytes());
        }
        StreamSpec spec;
        try {
            spec = StreamSpecs.fromJson(key, new String(value, StandardCharsets.UTF_8), defaults);
        } catch (ConfigException e) {
            throw new ControlRejected(ControlRejected.BAD_DEFINITION, e.getMessage());
        }
        String tooMany = limits.check(spec);
        if (tooMany != null) {
            throw new ControlRejected(ControlRejected.TOO_MANY_OBJECTS, tooMany);
        }
        return spec;
    }
}
