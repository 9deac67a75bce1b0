package io.samstream.stream.engine;

import io.samstream.config.SamstreamConfig;
import io.samstream.connectors.kafka.KafkaClients;

/**
 * The engine's input topics as the engine creates them, for tools that write to them before any engine ran
 * ({@code samstream streams put}, {@code samstream prompts}): a topic a producer made by the broker's
 * auto-creation would have the broker's partition count and no compaction, and an engine of a cluster then
 * refuses it. With {@code samstream.cluster.enabled} the streams and prompts topics get
 * {@code cluster.partitions} partitions (as {@link ClusterMember} makes them), else one (as
 * {@link StreamsTopicWatcher} and {@link PromptsTopicWatcher} do); the streams topic is compacted.
 */
public final class ControlTopics {
    private ControlTopics() {}

    /** The partitions the engines of {@code config} give the streams and prompts topics. */
    public static int partitions(SamstreamConfig config) {
        return config.cluster().enabled() ? config.cluster().partitions() : 1;
    }

    /** Creates the compacted streams topic {@code topic} unless it exists. */
    public static void ensureStreamsTopic(KafkaClients clients, SamstreamConfig config, String topic) {
        TopicFollower.createIfMissing(clients, topic, partitions(config), true);
    }

    /** Creates the prompts topic of {@code config} unless it exists. */
    public static void ensurePromptsTopic(KafkaClients clients, SamstreamConfig config) {
        TopicFollower.createIfMissing(clients, config.kafka().promptsTopic(), partitions(config), false);
    }
}
