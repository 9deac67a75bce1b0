package io.samstream.stream.http;

import io.samstream.stream.app.SamstreamRuntime;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** The masks topic of a demo engine as the console's browser tests read it. */
final class MasksTopic {
    private MasksTopic() {}

    /** A consumer of the masks topic positioned at its end now: it reads what is published from here on; close it. */
    static KafkaConsumer<String, byte[]> fromNow(SamstreamRuntime rt) {
        KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                rt.bootstrapServers()), new StringDeserializer(), new ByteArrayDeserializer());
        TopicPartition tp = new TopicPartition(rt.kafkaSink().orElseThrow().kafka().topic(), 0);
        c.assign(List.of(tp));
        c.seekToEnd(List.of(tp));
        c.position(tp);
        return c;
    }
}
