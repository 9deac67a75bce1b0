package io.samstream.connectors.kafka;

import io.samstream.config.KafkaSettings;
import io.samstream.config.KafkaSettings.Compression;
import io.samstream.connectors.record.MaskRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes {@link MaskRecord}s to a Kafka topic, at least once: key = stream id (so that one
 * stream's frames land in one partition, in order), value = JSON, schema version in a header.
 *
 * <p>The producer is idempotent with {@code acks=all}, so a record is acknowledged only once every
 * in-sync replica has it, and retries neither duplicate nor reorder records. While the brokers are
 * away records wait in the producer (up to {@code delivery.timeout.ms}, 5 minutes by default) and go
 * out when they are back. {@link #send} completes when the brokers acknowledged the record, or
 * fails; a frame counts as done only on success. Failures are counted and logged, never dropped.
 *
 * <p>The stages returned by {@link #send} complete on a thread of the sink's (one, in order), never
 * on Kafka's network thread, so that slow code chained on them cannot stall the producer.
 */
public final class KafkaMaskSink implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(KafkaMaskSink.class);
    private static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private final Producer<String, MaskRecord> producer;
    private final String topic;
    /** The {@link MaskRecord#ENGINE_HEADER} value of every record, or null for none. */
    private final byte[] engine;
    private final Executor completions;
    private final ExecutorService ownedCompletions;
    private final DeliveryFailureLog failureLog;
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong acked = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicBoolean closed = new AtomicBoolean();

    private KafkaMaskSink(Producer<String, MaskRecord> producer, String topic, String engine, Executor completions,
                          ExecutorService ownedCompletions) {
        this.producer = producer;
        this.topic = topic;
        this.engine = engine == null ? null : engine.getBytes(StandardCharsets.UTF_8);
        this.completions = completions;
        this.ownedCompletions = ownedCompletions;
        this.failureLog = new DeliveryFailureLog(log, topic);
    }

    /**
     * A sink configured by {@code samstream.kafka}: the brokers and shared client properties of
     * {@code clients}, then {@code producer {}} on top.
     */
    public static KafkaMaskSink create(KafkaClients clients, KafkaSettings settings) {
        return create(clients, settings, Optional.empty());
    }

    /** As {@link #create(KafkaClients, KafkaSettings)}, every record naming {@code engine} when given. */
    public static KafkaMaskSink create(KafkaClients clients, KafkaSettings settings, Optional<String> engine) {
        Map<String, Object> producer = new HashMap<>(clients.producerProperties());
        producer.putAll(settings.producer());
        Builder b = builder(clients.bootstrapServers(), settings.masksTopic())
                .compression(settings.compression())
                .producerProperties(producer);
        engine.ifPresent(b::engine);
        return b.build();
    }

    public static Builder builder(String bootstrapServers, String topic) {
        return new Builder(bootstrapServers, topic);
    }

    /**
     * Hands the record to the producer. The stage completes with the record's partition and offset
     * once the brokers acknowledged it, or exceptionally when it could not be delivered (the
     * delivery timeout passed, the record is too large, the sink was closed first, ...).
     *
     * <p>May block while the producer's buffer is full or the topic's metadata is unknown (at most
     * {@code max.block.ms}): that is the backpressure of a slow or absent Kafka.
     */
    public CompletionStage<RecordMetadata> send(MaskRecord record) {
        Objects.requireNonNull(record, "record");
        sent.incrementAndGet();
        Delivery delivery = new Delivery(record);
        if (closed.get()) {
            delivery.fail(new IllegalStateException("the mask sink is closed"));
            return delivery.result.minimalCompletionStage();
        }
        try {
            ProducerRecord<String, MaskRecord> r = new ProducerRecord<>(topic, record.stream(), record);
            if (engine != null) {
                r.headers().add(MaskRecord.ENGINE_HEADER, engine);
            }
            producer.send(r, delivery);
        } catch (RuntimeException e) {
            // Serialization errors, a closed producer, an interrupt while waiting for metadata.
            delivery.fail(e);
        }
        return delivery.result.minimalCompletionStage();
    }

    /**
     * Blocks until every record sent before the call was acknowledged or failed, and its stage
     * completed. Not from code chained on those stages: it would wait for itself.
     */
    public void flush() {
        producer.flush();
        if (ownedCompletions != null && !ownedCompletions.isShutdown()) {
            // The completion thread runs tasks in order: once this one ran, the earlier ones did.
            CompletableFuture.runAsync(() -> { }, ownedCompletions).join();
        }
    }

    /**
     * Sends what is buffered, waiting up to {@code timeout} for acknowledgements; records still
     * unacknowledged then fail (and are counted). Later sends fail at once. Closing twice does nothing.
     */
    public void close(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            producer.close(timeout);
        } finally {
            if (ownedCompletions != null) {
                ownedCompletions.shutdown();
                try {
                    ownedCompletions.awaitTermination(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            failureLog.reportRemaining();
            log.info("Kafka mask sink for topic {} closed: {} sent, {} acknowledged, {} failed",
                    topic, sentCount(), ackedCount(), failedCount());
        }
    }

    /** {@link #close(Duration)} with 30 seconds. */
    @Override
    public void close() {
        close(DEFAULT_CLOSE_TIMEOUT);
    }

    public String topic() {
        return topic;
    }

    /** Records given to {@link #send} (each ends up acknowledged or failed). */
    public long sentCount() {
        return sent.get();
    }

    /** Records the brokers acknowledged. */
    public long ackedCount() {
        return acked.get();
    }

    /** Records that could not be delivered. */
    public long failedCount() {
        return failed.get();
    }

    /** Records sent but neither acknowledged nor failed yet (waiting in the producer or on the wire). */
    public long pendingCount() {
        // Read the outcomes first: a record settling in between then shows as pending, never negative.
        long settled = acked.get() + failed.get();
        return sent.get() - settled;
    }

    /** The outcome of one send: counts it once, completes its stage on the completion thread. */
    private final class Delivery implements Callback {
        private final MaskRecord record;
        private final CompletableFuture<RecordMetadata> result = new CompletableFuture<>();
        private final AtomicBoolean settled = new AtomicBoolean();

        Delivery(MaskRecord record) {
            this.record = record;
        }

        @Override
        public void onCompletion(RecordMetadata metadata, Exception error) {
            if (error == null) {
                succeed(metadata);
            } else {
                fail(error);
            }
        }

        void succeed(RecordMetadata metadata) {
            if (settled.compareAndSet(false, true)) {
                acked.incrementAndGet();
                complete(() -> result.complete(metadata));
            }
        }

        void fail(Throwable error) {
            if (settled.compareAndSet(false, true)) {
                failed.incrementAndGet();
                failureLog.failed(record, error);
                complete(() -> result.completeExceptionally(error));
            }
        }

        private void complete(Runnable completion) {
            try {
                completions.execute(completion);
            } catch (RejectedExecutionException e) {
                completion.run(); // the sink is closing: complete here rather than never
            }
        }
    }

    /** Where the sink publishes and how; the defaults are those of {@code reference.conf}. */
    public static final class Builder {
        private final String bootstrapServers;
        private final String topic;
        private Compression compression = Compression.LZ4;
        private Map<String, ?> producerProperties = Map.of();
        private Executor completionExecutor;
        private String engine;

        private Builder(String bootstrapServers, String topic) {
            this.bootstrapServers = Objects.requireNonNull(bootstrapServers, "bootstrapServers");
            this.topic = Objects.requireNonNull(topic, "topic");
            if (bootstrapServers.isBlank()) {
                throw new IllegalArgumentException("bootstrapServers must name at least one broker");
            }
            if (topic.isBlank()) {
                throw new IllegalArgumentException("topic must not be blank");
            }
        }

        public Builder compression(Compression compression) {
            this.compression = Objects.requireNonNull(compression, "compression");
            return this;
        }

        /**
         * Kafka producer properties; they win over the sink's defaults, except that those which
         * would break at-least-once delivery are rejected by {@link #build}.
         */
        public Builder producerProperties(Map<String, ?> properties) {
            this.producerProperties = new HashMap<>(properties);
            return this;
        }

        /** Every record names {@code name} in its {@link MaskRecord#ENGINE_HEADER} header (an engine of a cluster). */
        public Builder engine(String name) {
            if (name.isBlank()) {
                throw new IllegalArgumentException("engine must not be blank");
            }
            this.engine = name;
            return this;
        }

        /**
         * Where the stages returned by {@link #send} complete; by default one thread of the sink's,
         * which keeps the order in which Kafka acknowledges.
         */
        public Builder completionExecutor(Executor executor) {
            this.completionExecutor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * @throws IllegalArgumentException naming the property, when a producer property would
         *                                  break at-least-once delivery or Kafka rejects it
         */
        public KafkaMaskSink build() {
            Map<String, Object> config = MaskProducerConfig.build(bootstrapServers, compression, producerProperties);
            KafkaProducer<String, MaskRecord> producer;
            try {
                producer = new KafkaProducer<>(config, new StringSerializer(), new MaskRecordSerializer());
            } catch (KafkaException e) {
                String cause = e.getCause() == null ? "" : ": " + e.getCause().getMessage();
                throw new IllegalArgumentException("Cannot create the Kafka producer of the mask sink: "
                        + e.getMessage() + cause, e);
            }
            ExecutorService owned = null;
            Executor completions = completionExecutor;
            if (completions == null) {
                owned = Executors.newSingleThreadExecutor(runnable -> {
                    Thread t = new Thread(runnable, "samstream-kafka-masks-completions");
                    t.setDaemon(true);
                    return t;
                });
                completions = owned;
            }
            log.info("Kafka mask sink publishing to topic {} at {} (acks=all, idempotent, {} compression)",
                    topic, bootstrapServers, config.get("compression.type"));
            return new KafkaMaskSink(producer, topic, engine, completions, owned);
        }
    }
}
