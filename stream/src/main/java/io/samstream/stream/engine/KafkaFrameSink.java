package io.samstream.stream.engine;

import io.samstream.connectors.kafka.KafkaMaskSink;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.video.VideoFrame;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.errors.RetriableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Mask records to Kafka, at least once: a record is done when the brokers acknowledged it. A send that
 * fails retriably (the producer's delivery timeout passed, e.g. a long outage) is counted, logged and sent
 * again with backoff until it is acknowledged or the engine closes; a record is never dropped. A send that
 * fails for good (record too large, serialization, invalid topic, authorization, ...) is counted and fails
 * that record's stage at once, naming the stream and the cause: its stream fails alone.
 */
public final class KafkaFrameSink implements FrameSink {
    private static final Logger log = LoggerFactory.getLogger(KafkaFrameSink.class);
    private static final Duration FIRST_RETRY = Duration.ofSeconds(1);
    private static final Duration LAST_RETRY = Duration.ofSeconds(30);

    private final KafkaMaskSink sink;
    private final EngineMetrics metrics;
    private final ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "samstream-kafka-retries");
        t.setDaemon(true);
        return t;
    });
    /** Records waiting for their next attempt: failed, not dropped, when the sink closes first. */
    private final Set<CompletableFuture<Void>> waiting = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    public KafkaFrameSink(KafkaMaskSink sink, EngineMetrics metrics) {
        this.sink = sink;
        this.metrics = metrics;
    }

    @Override
    public CompletionStage<Void> accept(MaskRecord record, VideoFrame frame) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        send(record, done, FIRST_RETRY);
        return done;
    }

    private void send(MaskRecord record, CompletableFuture<Void> done, Duration backoff) {
        sink.send(record).whenComplete((metadata, error) -> {
            if (error == null) {
                done.complete(null);
                return;
            }
            metrics.sendErrors().increment();
            if (closed) {
                done.completeExceptionally(error);
                return;
            }
            if (!retriable(error)) {
                metrics.sendRejected().increment();
                log.error("stream {} frame {}: send failed for good, not retrying: {}", record.stream(),
                        record.frame(), Errors.describe(error));
                done.completeExceptionally(new IllegalStateException("stream " + record.stream() + ": Kafka refused "
                        + "the record of frame " + record.frame() + " (not retriable): " + describe(error), error));
                return;
            }
            log.warn("stream {} frame {}: send failed ({}), sending again in {} s", record.stream(), record.frame(),
                    Errors.describe(error), backoff.toSeconds());
            Duration next = backoff.multipliedBy(2).compareTo(LAST_RETRY) > 0 ? LAST_RETRY : backoff.multipliedBy(2);
            waiting.add(done);
            try {
                retries.schedule(() -> {
                    if (waiting.remove(done)) {
                        send(record, done, next);
                    }
                }, backoff.toMillis(), TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException closing) {
                failWaiting();
            }
        });
    }

    /**
     * True when sending again may succeed: a {@link RetriableException} (timeouts, an unavailable leader, ...)
     * or a timeout anywhere in the cause chain (the sink's stages wrap Kafka's error in a CompletionException).
     */
    static boolean retriable(Throwable error) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = error; t != null && seen.add(t); t = t.getCause()) {
            if (t instanceof RetriableException || t instanceof org.apache.kafka.common.errors.TimeoutException
                    || t instanceof java.util.concurrent.TimeoutException) {
                return true;
            }
        }
        return false;
    }

    /** The innermost cause's class and message. */
    private static String describe(Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + ": " + Errors.describe(t);
    }

    /** The sink's producer counters, for summaries. */
    public KafkaMaskSink kafka() {
        return sink;
    }

    @Override
    public void close() {
        close(java.time.Duration.ofSeconds(30));
    }

    /** Records already produced are sent and acknowledged within {@code timeout}; later ones fail. */
    @Override
    public void close(java.time.Duration timeout) {
        closed = true;
        retries.shutdownNow();
        failWaiting();
        sink.close(timeout);
    }

    private void failWaiting() {
        for (CompletableFuture<Void> done : List.copyOf(waiting)) {
            if (waiting.remove(done)) {
                done.completeExceptionally(new IllegalStateException(
                        "the Kafka sink closed before the record was acknowledged"));
            }
        }
    }
}
