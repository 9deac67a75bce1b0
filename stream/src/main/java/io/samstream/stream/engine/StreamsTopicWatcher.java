package io.samstream.stream.engine;

import io.samstream.config.StreamDefaults;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.kafka.KafkaClients;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
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

    private final ControlRejections rejections;

    private StreamsTopicWatcher(Engine engine, StreamDefaults defaults, ControlRejections rejections) {
        this.engine = engine;
        this.defaults = defaults;
        this.rejections = rejections;
    }

    /** Creates the topic (compacted) when missing and starts following it from the beginning. */
    public static StreamsTopicWatcher start(Engine engine, KafkaClients clients, String topic,
            StreamDefaults defaults) {
        return start(engine, clients, topic, defaults, Optional.empty());
    }

    /** As above; rejected definitions are copied to {@code deadLetterTopic} when present. */
    public static StreamsTopicWatcher start(Engine engine, KafkaClients clients, String topic,
            StreamDefaults defaults, Optional<String> deadLetterTopic) {
        TopicFollower.createIfMissing(clients, topic, true);
        StreamsTopicWatcher w = new StreamsTopicWatcher(engine, defaults,
                new ControlRejections(engine.metrics(), clients, deadLetterTopic));
        w.follower = TopicFollower.start(clients, topic, "samstream-streams", TopicFollower.StartAt.BEGINNING,
                w::handle, w.rejections::close);
        log.info("following stream definitions on topic {}", topic);
        return w;
    }

    /**
     * One record: a tombstone removes its stream; a definition is validated whole ({@link DefinitionRecord}) and
     * then added or redefined; a record that fails is rejected ({@link ControlRejections}) and the next one read.
     */
    private void handle(ConsumerRecord<String, byte[]> r) {
        try {
            if (r.value() == null && r.key() != null && StreamSpec.ID.matcher(r.key()).matches()) {
                current.remove(r.key());
                if (engine.remove(r.key())) {
                    log.info("stream definitions: {} removed", r.key());
                }
                applied++;
                return;
            }
            StreamSpec spec = DefinitionRecord.parse(r.key(), r.value(), defaults, engine.limits());
            String json = new String(r.value(), StandardCharsets.UTF_8);
            // The same definition again (a producer's retry, a replay) changes nothing: a file stream
            // that ended is not read again until its definition changes.
            if (Objects.equals(current.get(spec.id()), json)) {
                return;
            }
            current.put(spec.id(), json);
            engine.add(spec);
            applied++;
        } catch (ControlRejected e) {
            rejected++;
            rejections.reject("streams", r, e.reason(), e.getMessage());
        } catch (RuntimeException e) {
            // One definition that cannot be applied (the engine refused it, ...) is skipped: the next
            // ones still are.
            rejected++;
            rejections.reject("streams", r, ControlRejected.ERROR, Errors.describe(e));
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
