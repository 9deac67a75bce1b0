package io.samstream.stream.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the prompts topic and applies its messages to the engine's streams ({@link PromptMessage}).
 * Starts at the topic's end (prompt changes are commands for the streams running now, not a state to
 * replay); no consumer group, so every engine instance sees every message. A rejected message is logged
 * with its reason and key, counted ({@code samstream_prompts_rejected_total{reason}}) and, when a
 * dead-letter topic is configured, copied there with the reason in headers. Nothing stops a stream.
 */
public final class PromptsTopicWatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PromptsTopicWatcher.class);
    /** Headers of a dead-lettered message. */
    public static final String REASON_HEADER = "samstream.reject.reason";
    public static final String DETAIL_HEADER = "samstream.reject.detail";
    public static final String SOURCE_HEADER = "samstream.source";

    private final Engine engine;
    private final String topic;
    private final Optional<String> deadLetterTopic;
    private final KafkaConsumer<String, byte[]> consumer;
    private final KafkaProducer<String, byte[]> deadLetters;
    private final Thread thread;
    private volatile boolean closed;
    private volatile long accepted;
    private volatile long rejected;

    private PromptsTopicWatcher(Engine engine, String bootstrapServers, String topic, Optional<String> deadLetterTopic) {
        this.engine = engine;
        this.topic = topic;
        this.deadLetterTopic = deadLetterTopic;
        this.consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.CLIENT_ID_CONFIG, "samstream-prompts",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest"), new StringDeserializer(),
                new ByteArrayDeserializer());
        this.deadLetters = deadLetterTopic.isEmpty() ? null : new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ProducerConfig.CLIENT_ID_CONFIG, "samstream-prompts-dead-letters",
                ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new ByteArraySerializer());
        this.thread = new Thread(this::run, "samstream-prompts-topic");
        this.thread.setDaemon(true);
    }

    /**
     * Creates the prompts topic (and the dead-letter topic) when missing and starts following the prompts
     * topic from its end; messages produced after this returns are all seen.
     */
    public static PromptsTopicWatcher start(Engine engine, String bootstrapServers, String topic,
            Optional<String> deadLetterTopic) {
        createIfMissing(bootstrapServers, topic);
        deadLetterTopic.ifPresent(t -> createIfMissing(bootstrapServers, t));
        PromptsTopicWatcher w = new PromptsTopicWatcher(engine, bootstrapServers, topic, deadLetterTopic);
        try {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo p : w.consumer.partitionsFor(topic, Duration.ofSeconds(30))) {
                partitions.add(new TopicPartition(topic, p.partition()));
            }
            w.consumer.assign(partitions);
            w.consumer.seekToEnd(partitions);
            for (TopicPartition p : partitions) {
                w.consumer.position(p, Duration.ofSeconds(30)); // resolve the end now, not at the first poll
            }
        } catch (RuntimeException e) {
            w.consumer.close(Duration.ZERO);
            if (w.deadLetters != null) {
                w.deadLetters.close(Duration.ZERO);
            }
            throw e;
        }
        w.thread.start();
        log.info("following prompt changes on topic {}{}", topic,
                deadLetterTopic.map(t -> " (rejected ones go to " + t + ")").orElse(""));
        return w;
    }

    static void createIfMissing(String bootstrapServers, String topic) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            if (!existing.contains(topic)) {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) -1))).all().get(30, TimeUnit.SECONDS);
                log.info("created the topic {}", topic);
            }
        } catch (java.util.concurrent.ExecutionException e) {
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
                    handle(r);
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException e) {
            log.error("prompts: stopped following {}: {}", topic, Errors.describe(e), e);
        } finally {
            consumer.close(Duration.ofSeconds(5));
            if (deadLetters != null) {
                deadLetters.close(Duration.ofSeconds(5));
            }
        }
    }

    private void handle(ConsumerRecord<String, byte[]> r) {
        String reason;
        String detail;
        try {
            PromptMessage m = PromptMessage.parse(r.key(), r.value());
            long from = engine.applyPrompt(m);
            accepted++;
            engine.metrics().promptsAccepted(m.op().wireName()).increment();
            log.info("prompts: stream {}: {}{} from frame {}", m.stream(), m.op().wireName(),
                    m.op() == PromptMessage.Op.RESET ? "" : " object " + m.object(), from);
            return;
        } catch (PromptRejected e) {
            reason = e.reason();
            detail = e.getMessage();
        } catch (RuntimeException e) {
            // Whatever else went wrong with one message: it is rejected, the next ones are still read.
            reason = "error";
            detail = Errors.describe(e);
        }
        rejected++;
        engine.metrics().promptsRejected(reason).increment();
        log.warn("prompts: rejected the message with key '{}' at {}-{}@{}: {} ({})", r.key(), r.topic(),
                r.partition(), r.offset(), detail, reason);
        if (deadLetters != null) {
            ProducerRecord<String, byte[]> dl = new ProducerRecord<>(deadLetterTopic.get(), r.key(), r.value());
            dl.headers().add(REASON_HEADER, reason.getBytes(StandardCharsets.UTF_8));
            dl.headers().add(DETAIL_HEADER, detail.getBytes(StandardCharsets.UTF_8));
            dl.headers().add(SOURCE_HEADER, (r.topic() + "/" + r.partition() + "/" + r.offset())
                    .getBytes(StandardCharsets.UTF_8));
            try {
                deadLetters.send(dl, (meta, e) -> {
                    if (e != null) {
                        log.warn("prompts: could not send a rejected message to {}: {}", deadLetterTopic.get(),
                                Errors.describe(e));
                    }
                });
            } catch (RuntimeException e) {
                log.warn("prompts: could not send a rejected message to {}: {}", deadLetterTopic.get(),
                        Errors.describe(e));
            }
        }
    }

    /** Messages applied so far. */
    public long accepted() {
        return accepted;
    }

    /** Messages rejected so far. */
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
