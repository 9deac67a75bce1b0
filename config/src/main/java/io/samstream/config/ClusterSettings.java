package io.samstream.config;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The validated {@code samstream.cluster} section: engines sharded by a Kafka consumer group over the
 * streams topic, with their streams' progress and tracks in a compacted state topic.
 *
 * @param enabled          off: every engine runs every stream of the streams topic (no group)
 * @param group            the consumer group of the engines
 * @param instanceId       static membership ({@code group.instance.id}); empty: the host name
 * @param partitions       partitions of the streams, prompts and state topics when the engine creates them
 * @param stateTopic       the compacted topic of each stream's progress and tracks (key = stream id)
 * @param stateEveryFrames a stream's state is written after every this many frames (and when it moves)
 * @param sessionTimeout   how long the group waits for a silent engine before moving its streams
 */
public record ClusterSettings(boolean enabled, String group, Optional<String> instanceId, int partitions,
        String stateTopic, int stateEveryFrames, Duration sessionTimeout) {

    public static final ClusterSettings OFF = new ClusterSettings(false, "samstream", Optional.empty(), 12,
            "samstream.state", 25, Duration.ofSeconds(10));

    public ClusterSettings {
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(instanceId, "instanceId");
        Objects.requireNonNull(stateTopic, "stateTopic");
        Objects.requireNonNull(sessionTimeout, "sessionTimeout");
    }
}
