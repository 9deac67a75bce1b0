package io.samstream.stream.engine;

import io.samstream.config.ConfigException;
import io.samstream.config.StreamDefaults;
import io.samstream.config.StreamSpec;
import io.samstream.config.StreamSpecs;
import io.samstream.connectors.kafka.KafkaClients;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;


/**
 * Follows the compacted topic of stream definitions (key = stream id, value = JSON definition, a
 * tombstone removes) and adds, redefines and removes the engine's streams to match. Reads every
 * partition from the beginning (the compacted topic is the whole current state); no consumer group,
 * so every engine instance sees every definition. A malformed definition is logged and skipped.
 */
public final class StreamsTopicWatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StreamsTopicWatcher.class);

    private final Engine engine;
    private final StreamDefaults defaults;
    /** The definition last applied per stream id, to skip re-applying an unchanged one. */
    private final Map<String, String> current = new HashMap<>();
    private TopicFollower follower;
    private volatile long applied;
    private volatile long rejected;

    private StreamsTopicWatcher(Engine engine, StreamDefaults defaults) {
        this.engine = engine;
        this.defaults = defaults;
    }

    /** Creates the topic (compacted) when missing and starts following it from the beginning. */
    public static StreamsTopicWatcher start(Engine engine, KafkaClients clients, String topic,
            StreamDefaults defaults) {
        TopicFollower.createIfMissing(clients, topic, true);
        StreamsTopicWatcher w = new StreamsTopicWatcher(engine, defaults);
        w.follower = TopicFollower.start(clients, topic, "samstream-streams", TopicFollower.StartAt.BEGINNING,
                w::handle, () -> { });
        log.info("following stream definitions on topic {}", topic);
        return w;
    }

    private void handle(ConsumerRecord<String, byte[]> r) {
        try {
            apply(r.key(), r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            // One definition that cannot be applied (the engine refused it, ...) is skipped: the next
            // ones still are.
            rejected++;
            log.error("stream definitions: skipped the record with key '{}': {}", LogSafe.of(r.key()), Errors.describe(e), e);
        }
    }

    /** One definition: add or redefine, or (null) remove. */
    void apply(String id, String json) {
        if (id == null || !StreamSpec.ID.matcher(id).matches()) {
            rejected++;
            log.warn("stream definitions: skipped a record with key '{}': not a valid stream id", LogSafe.of(id));
            return;
        }
        if (json == null) {
            current.remove(id);
            if (engine.remove(id)) {
                log.info("stream definitions: {} removed", id);
            }
            applied++;
            return;
        }
        try {
            StreamSpec spec = StreamSpecs.fromJson(id, json, defaults);
            // The same definition again (a producer's retry, a replay) changes nothing: a file stream
            // that ended is not read again until its definition changes.
            if (Objects.equals(current.get(id), json)) {
                return;
            }
            current.put(id, json);
            engine.add(spec);
            applied++;
        } catch (ConfigException e) {
            rejected++;
            log.warn("stream definitions: skipped: {}", LogSafe.of(e.getMessage(), PromptsTopicWatcher.DETAIL_MAX_CHARS));
        }
    }

    /** Definitions applied (added, redefined, removed) so far. */
    public long applied() {
        return applied;
    }

    /** Records skipped as malformed so far. */
    public long rejected() {
        return rejected;
    }

    @Override
    public void close() {
        follower.close();
    }
}
