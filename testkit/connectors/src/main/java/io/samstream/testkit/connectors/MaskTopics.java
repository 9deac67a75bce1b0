package io.samstream.testkit.connectors;

import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.connectors.kafka.MaskRecordJson;
import io.samstream.testkit.KafkaTopics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** A masks topic read back as a consumer of it would: every record parsed, its key checked against its stream. */
public final class MaskTopics {
    private MaskTopics() {}

    /** {@link #readAll(String, Map, String, int, Duration)} without extra consumer properties. */
    public static List<MaskRecord> readAll(String bootstrap, String topic, int expected, Duration timeout) {
        return readAll(bootstrap, Map.of(), topic, expected, timeout);
    }

    /**
     * Every record of {@code topic} ({@link KafkaTopics#readAll}: from the start, at least {@code expected}
     * and all the log held, repeats included), parsed.
     *
     * @param properties extra consumer properties (security settings)
     * @throws AssertionError when a record's key is not its stream
     */
    public static List<MaskRecord> readAll(String bootstrap, Map<String, ?> properties, String topic, int expected,
            Duration timeout) {
        List<MaskRecord> out = new ArrayList<>();
        for (ConsumerRecord<String, byte[]> r : KafkaTopics.readAll(bootstrap, properties, topic, expected, timeout)) {
            MaskRecord m = MaskRecordJson.read(r.value());
            if (!m.stream().equals(r.key())) {
                throw new AssertionError("key " + r.key() + " differs from stream " + m.stream());
            }
            out.add(m);
        }
        return out;
    }
}
