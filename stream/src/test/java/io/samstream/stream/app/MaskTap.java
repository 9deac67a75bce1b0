package io.samstream.stream.app;

import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.record.MaskRecordJson;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Follows a masks topic (partition 0, from the start) on a thread, noting when each record arrived. */
final class MaskTap implements AutoCloseable {
    /**
     * A record, when this tap read it ({@link System#nanoTime}), and the engine that published it (its
     * {@link MaskRecord#ENGINE_HEADER}; empty when the record has none).
     */
    record Seen(MaskRecord record, long atNanos, String engine) {}

    private final KafkaConsumer<String, byte[]> consumer;
    private final List<Seen> seen = new ArrayList<>();
    private final Thread thread;
    private volatile boolean closed;

    MaskTap(String bootstrap, String topic) {
        consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new StringDeserializer(), new ByteArrayDeserializer());
        TopicPartition p = new TopicPartition(topic, 0);
        consumer.assign(List.of(p));
        consumer.seekToBeginning(List.of(p));
        thread = new Thread(() -> {
            try {
                while (!closed) {
                    for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                        long now = System.nanoTime();
                        Header engine = r.headers().lastHeader(MaskRecord.ENGINE_HEADER);
                        String name = engine == null ? "" : new String(engine.value(), StandardCharsets.UTF_8);
                        synchronized (seen) {
                            seen.add(new Seen(MaskRecordJson.read(r.value()), now, name));
                        }
                    }
                }
            } catch (WakeupException e) {
                // closing
            } finally {
                consumer.close(Duration.ofSeconds(5));
            }
        }, "mask-tap");
        thread.setDaemon(true);
        thread.start();
    }

    List<Seen> seen() {
        synchronized (seen) {
            return new ArrayList<>(seen);
        }
    }

    List<MaskRecord> records() {
        return seen().stream().map(Seen::record).toList();
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        consumer.wakeup();
        thread.join(10_000);
    }
}
