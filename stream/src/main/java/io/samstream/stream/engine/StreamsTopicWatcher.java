package io.samstream.stream.engine;

import io.samstream.config.ConfigException;
import io.samstream.config.StreamDefaults;
import io.samstream.config.StreamSpec;
import io.samstream.config.StreamSpecs;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
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
    private final String topic;
    private final StreamDefaults defaults;
    private final KafkaConsumer<String, byte[]> consumer;
    private final Thread thread;
    /** The definition last applied per stream id, to skip re-applying an unchanged one. */
    private final Map<String, String> current = new HashMap<>();
    private volatile boolean closed;
    private volatile long applied;
    private volatile long rejected;

    private StreamsTopicWatcher(Engine engine, String bootstrapServers, String topic, StreamDefaults defaults) {
        this.engine = engine;
        this.topic = topic;
        this.defaults = defaults;
        this.consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.CLIENT_ID_CONFIG, "samstream-streams",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(),
                new ByteArrayDeserializer());
        this.thread = new Thread(this::run, "samstream-streams-topic");
        this.thread.setDaemon(true);
    }

    /** Creates the topic (compacted) when missing and starts following it. */
    public static StreamsTopicWatcher start(Engine engine, String bootstrapServers, String topic,
            StreamDefaults defaults) {
        createCompacted(bootstrapServers, topic);
        StreamsTopicWatcher w = new StreamsTopicWatcher(engine, bootstrapServers, topic, defaults);
        List<TopicPartition> partitions = new ArrayList<>();
        for (PartitionInfo p : w.consumer.partitionsFor(topic, Duration.ofSeconds(30))) {
            partitions.add(new TopicPartition(topic, p.partition()));
        }
        w.consumer.assign(partitions);
        w.consumer.seekToBeginning(partitions);
        w.thread.start();
        log.info("following stream definitions on topic {}", topic);
        return w;
    }

    static void createCompacted(String bootstrapServers, String topic) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            if (!existing.contains(topic)) {
                NewTopic t = new NewTopic(topic, 1, (short) -1)
                        .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
                admin.createTopics(List.of(t)).all().get(30, TimeUnit.SECONDS);
                log.info("created the compacted topic {}", topic);
            }
        } catch (java.util.concurrent.ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw new IllegalStateException("cannot create the streams topic " + topic + ": "
                        + Errors.describe(e), e);
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot create the streams topic " + topic + ": " + Errors.describe(e), e);
        }
    }

    private void run() {
        try {
            while (!closed) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    try {
                        apply(r.key(), r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8));
                    } catch (RuntimeException e) {
                        // One definition that cannot be applied (the engine refused it, ...) is skipped: the
                        // next ones still are.
                        rejected++;
                        log.error("stream definitions: skipped the record with key '{}': {}", r.key(),
                                Errors.describe(e), e);
                    }
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException e) {
            log.error("stream definitions: stopped following {}: {}", topic, Errors.describe(e), e);
        } finally {
            consumer.close(Duration.ofSeconds(5));
        }
    }

    /** One definition: add or redefine, or (null) remove. */
    void apply(String id, String json) {
        if (id == null || !StreamSpec.ID.matcher(id).matches()) {
            rejected++;
            log.warn("stream definitions: skipped a record with key '{}': not a valid stream id", id);
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
            log.warn("stream definitions: skipped: {}", e.getMessage());
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
        closed = true;
        consumer.wakeup();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
