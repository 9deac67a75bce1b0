package io.samstream.stream.engine;

import io.samstream.connectors.kafka.KafkaClients;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What happens to a control-plane record that is not acted on, the same for the prompts, streams and state
 * topics: one log line (key and detail escaped and cut), the count
 * {@code samstream_control_rejected_total{topic,reason}}, and a copy to the dead-letter topic when one is
 * configured (same key and value; headers {@value #REASON_HEADER}, {@value #DETAIL_HEADER}, {@value #SOURCE_HEADER}
 * = topic/partition/offset). Never throws: a rejection cannot stop what reads the topic.
 */
public final class ControlRejections implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ControlRejections.class);
    public static final String REASON_HEADER = "samstream.reject.reason";
    public static final String DETAIL_HEADER = "samstream.reject.detail";
    public static final String SOURCE_HEADER = "samstream.source";
    /** A rejection's detail is cut to this many characters (it quotes parts of the record). */
    public static final int DETAIL_MAX_CHARS = 1000;

    private final EngineMetrics metrics;
    private final Optional<String> deadLetterTopic;
    private final KafkaProducer<String, byte[]> deadLetters;

    /** @param clients null (no Kafka: nothing is dead-lettered) or the engine's clients */
    public ControlRejections(EngineMetrics metrics, KafkaClients clients, Optional<String> deadLetterTopic) {
        this.metrics = metrics;
        this.deadLetterTopic = clients == null ? Optional.empty() : deadLetterTopic;
        this.deadLetters = this.deadLetterTopic.isEmpty() ? null : clients.producer("samstream-dead-letters",
                Map.of(ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new ByteArraySerializer());
    }

    /**
     * Rejects one record: logs it once, counts it under {@code topic} (prompts, streams, state) and {@code reason},
     * and dead-letters it.
     *
     * @return the detail as logged (escaped, cut)
     */
    public String reject(String topic, ConsumerRecord<String, byte[]> r, String reason, String detail) {
        String safe = LogSafe.of(detail, DETAIL_MAX_CHARS);
        log.warn("{}: rejected the record with key '{}' at {}-{}@{}: {} ({})", topic, LogSafe.of(r.key()),
                r.topic(), r.partition(), r.offset(), safe, reason);
        countAndDeadLetter(topic, r, reason, safe);
        return safe;
    }

    /** As {@link #reject} for a caller that logged the rejection itself ({@code detail} already made safe). */
    void countAndDeadLetter(String topic, ConsumerRecord<String, byte[]> r, String reason, String detail) {
        try {
            metrics.controlRejected(topic, reason).increment();
            deadLetter(r, reason, detail);
        } catch (RuntimeException e) {
            log.warn("{}: rejecting a record failed: {}", topic, Errors.describe(e));
        }
    }

    private void deadLetter(ConsumerRecord<String, byte[]> r, String reason, String detail) {
        if (deadLetters == null) {
            return;
        }
        ProducerRecord<String, byte[]> dl = new ProducerRecord<>(deadLetterTopic.get(), r.key(), r.value());
        dl.headers().add(REASON_HEADER, reason.getBytes(StandardCharsets.UTF_8));
        dl.headers().add(DETAIL_HEADER, detail.getBytes(StandardCharsets.UTF_8));
        dl.headers().add(SOURCE_HEADER, (r.topic() + "/" + r.partition() + "/" + r.offset())
                .getBytes(StandardCharsets.UTF_8));
        try {
            deadLetters.send(dl, (meta, e) -> {
                if (e != null) {
                    log.warn("could not send a rejected record to {}: {}", deadLetterTopic.get(), Errors.describe(e));
                }
            });
        } catch (RuntimeException e) {
            log.warn("could not send a rejected record to {}: {}", deadLetterTopic.get(), Errors.describe(e));
        }
    }

    @Override
    public void close() {
        if (deadLetters != null) {
            deadLetters.close(Duration.ofSeconds(5));
        }
    }
}
