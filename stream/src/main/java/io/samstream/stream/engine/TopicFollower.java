package io.samstream.stream.engine;

import io.samstream.connectors.kafka.KafkaClients;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
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
 * Follows one Kafka topic on a thread of its own and hands each record to a handler: what the
 * streams-topic and prompts-topic watchers share. Every partition is assigned directly (no consumer
 * group: every engine instance sees every record), from the beginning (a compacted topic that is the
 * current state) or from the end (commands for what runs now). A handler that throws loses that one
 * record only; the follower logs it and goes on.
 */
final class TopicFollower implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TopicFollower.class);
    private static final Duration METADATA_TIMEOUT = Duration.ofSeconds(30);

    /** Where a newly started follower begins reading. */
    enum StartAt { BEGINNING, END }

    private final String topic;
    private final KafkaConsumer<String, byte[]> consumer;
    private final Consumer<ConsumerRecord<String, byte[]>> handler;
    private final Runnable onStop;
    private final Thread thread;
    private volatile boolean closed;

    private TopicFollower(KafkaClients clients, String topic, String clientId,
            Consumer<ConsumerRecord<String, byte[]>> handler, Runnable onStop) {
        this.topic = topic;
        this.handler = handler;
        this.onStop = onStop;
        this.consumer = clients.consumer(clientId, Map.of(
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(),
                new ByteArrayDeserializer());
        this.thread = new Thread(this::run, clientId + "-topic");
        this.thread.setDaemon(true);
    }

    /**
     * Assigns every partition of {@code topic} (which must exist), positions at {@code startAt} before
     * returning (so records produced after this call are all seen) and starts the thread.
     *
     * @param onStop runs on the follower's thread after it stopped reading (closing what the handler uses)
     */
    static TopicFollower start(KafkaClients clients, String topic, String clientId, StartAt startAt,
            Consumer<ConsumerRecord<String, byte[]>> handler, Runnable onStop) {
        TopicFollower f = new TopicFollower(clients, topic, clientId, handler, onStop);
        try {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo p : f.consumer.partitionsFor(topic, METADATA_TIMEOUT)) {
                partitions.add(new TopicPartition(topic, p.partition()));
            }
            f.consumer.assign(partitions);
            if (startAt == StartAt.BEGINNING) {
                f.consumer.seekToBeginning(partitions);
            } else {
                f.consumer.seekToEnd(partitions);
            }
            for (TopicPartition p : partitions) {
                f.consumer.position(p, METADATA_TIMEOUT); // resolve the position now, not at the first poll
            }
        } catch (RuntimeException e) {
            f.consumer.close(Duration.ZERO);
            onStop.run();
            throw e;
        }
        f.thread.start();
        return f;
    }

    /** Creates {@code topic} (one partition, the broker's replication factor) unless it exists. */
    static void createIfMissing(KafkaClients clients, String topic, boolean compacted) {
        createIfMissing(clients, topic, 1, compacted);
    }

    /** Creates {@code topic} with {@code partitions} (the broker's replication factor) unless it exists. */
    static void createIfMissing(KafkaClients clients, String topic, int partitions, boolean compacted) {
        try (Admin admin = clients.admin("samstream-topics", Map.of())) {
            Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            if (!existing.contains(topic)) {
                NewTopic t = new NewTopic(topic, partitions, (short) -1);
                if (compacted) {
                    t.configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
                }
                admin.createTopics(List.of(t)).all().get(30, TimeUnit.SECONDS);
                log.info("created the {}topic {}", compacted ? "compacted " : "", topic);
            }
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw new IllegalStateException("cannot create the topic " + topic + ": " + Errors.describe(e), e);
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot create the topic " + topic + ": " + Errors.describe(e), e);
        }
    }

    private void run() {
        try {
            while (!closed) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    try {
                        handler.accept(r);
                    } catch (RuntimeException e) {
                        // Handlers count and log what they reject; this is the last guard for the rest.
                        log.error("{}: skipped the record with key '{}' at offset {}: {}", topic, LogSafe.of(r.key()), r.offset(),
                                Errors.describe(e), e);
                    }
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException e) {
            log.error("stopped following {}: {}", topic, Errors.describe(e), e);
        } finally {
            consumer.close(Duration.ofSeconds(5));
            onStop.run();
        }
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
