package io.samstream.stream.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.kafka.KafkaClients;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Every stream defined on the streams topic, whichever engine runs it (the HTTP API's cluster-wide list): follows the
 * compacted streams topic from its beginning and, in a cluster, the state topic, whose latest record of a stream names
 * the engine that last ran it. Reads only; a record that cannot be read is skipped. At most {@link #MAX_STREAMS}
 * streams are kept (a topic with more lists the first ones).
 */
public final class StreamDirectory implements AutoCloseable {
    static final int MAX_STREAMS = 100_000;
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * One stream of the topic.
     *
     * @param id         its id (the record key)
     * @param definition its definition (JSON, as on the topic)
     * @param engine     the engine whose state record is the stream's latest (cluster); empty when none is known
     * @param ended      whether that state says a file stream ended
     */
    public record Entry(String id, String definition, Optional<String> engine, boolean ended) {}

    private final Map<String, String> definitions = new ConcurrentHashMap<>();
    private final Map<String, JsonNode> states = new ConcurrentHashMap<>();
    private final TopicFollower streams;
    private final TopicFollower state;

    private StreamDirectory(KafkaClients clients, String streamsTopic, Optional<String> stateTopic) {
        this.streams = TopicFollower.start(clients, streamsTopic, "samstream-directory-streams",
                TopicFollower.StartAt.BEGINNING, this::definition, () -> { });
        TopicFollower s = null;
        try {
            s = stateTopic.map(t -> TopicFollower.start(clients, t, "samstream-directory-state",
                    TopicFollower.StartAt.BEGINNING, this::state, () -> { })).orElse(null);
        } catch (RuntimeException e) {
            streams.close();
            throw e;
        }
        this.state = s;
    }

    /**
     * Follows {@code streamsTopic} and, when given, {@code stateTopic}; each is created (compacted, {@code partitions}
     * partitions, as the engine's watcher or cluster member would) when missing.
     */
    public static StreamDirectory start(KafkaClients clients, String streamsTopic, Optional<String> stateTopic,
            int partitions) {
        TopicFollower.createIfMissing(clients, streamsTopic, partitions, true);
        stateTopic.ifPresent(t -> TopicFollower.createIfMissing(clients, t, partitions, true));
        return new StreamDirectory(clients, streamsTopic, stateTopic);
    }

    private void definition(ConsumerRecord<String, byte[]> r) {
        if (r.key() == null || !StreamSpec.ID.matcher(r.key()).matches()) {
            return;
        }
        if (r.value() == null) {
            definitions.remove(r.key());
        } else if (definitions.size() < MAX_STREAMS || definitions.containsKey(r.key())) {
            definitions.put(r.key(), new String(r.value(), StandardCharsets.UTF_8));
        }
    }

    private void state(ConsumerRecord<String, byte[]> r) {
        if (r.key() == null) {
            return;
        }
        if (r.value() == null) {
            states.remove(r.key());
            return;
        }
        try {
            JsonNode n = JSON.readTree(r.value());
            if (n != null && n.isObject() && (states.size() < MAX_STREAMS || states.containsKey(r.key()))) {
                // Only what the directory shows: the engine and whether it ended (not the tracks).
                states.put(r.key(), JSON.createObjectNode().put("engine", n.path("engine").asText(""))
                        .put("ended", n.path("ended").asBoolean(false)));
            }
        } catch (IOException e) {
            // Not a state this engine can read: it shows no owner.
        }
    }

    /** Every stream defined now, by id. */
    public Map<String, Entry> entries() {
        Map<String, Entry> out = new TreeMap<>();
        definitions.forEach((id, json) -> out.put(id, entry(id, json)));
        return out;
    }

    /** Stream {@code id}, when it is defined. */
    public Optional<Entry> entry(String id) {
        String json = definitions.get(id);
        return json == null ? Optional.empty() : Optional.of(entry(id, json));
    }

    private Entry entry(String id, String json) {
        JsonNode s = states.get(id);
        String engine = s == null ? "" : s.path("engine").asText("");
        return new Entry(id, json, engine.isEmpty() ? Optional.empty() : Optional.of(engine),
                s != null && s.path("ended").asBoolean(false));
    }

    @Override
    public void close() {
        streams.close();
        if (state != null) {
            state.close();
        }
    }
}
