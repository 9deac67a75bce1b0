package io.samstream.stream.cli;

import io.samstream.connectors.kafka.KafkaClients;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The stream definitions on the streams topic now, as every engine sees them: the latest value per key, a
 * tombstone removing the key (what compaction keeps). Values are the JSON text as written; checking them is
 * {@link io.samstream.config.StreamSpecs}'s job, as in the engine.
 */
final class StreamDefinitions {
    /** The topic, and whether it exists. */
    final String topic;
    final boolean exists;
    /** Stream id to its definition's JSON, by id. */
    final SortedMap<String, String> byId;

    private StreamDefinitions(String topic, boolean exists, SortedMap<String, String> byId) {
        this.topic = topic;
        this.exists = exists;
        this.byId = byId;
    }

    static StreamDefinitions read(KafkaClients clients, String topic, Duration timeout) {
        SortedMap<String, String> byId = new TreeMap<>();
        boolean exists = TopicReads.readToEnd(clients, topic, timeout, r -> {
            if (r.key() != null) {
                if (r.value() == null) {
                    byId.remove(r.key());
                } else {
                    byId.put(r.key(), new String(r.value(), StandardCharsets.UTF_8));
                }
            }
            return true;
        });
        return new StreamDefinitions(topic, exists, byId);
    }
}
