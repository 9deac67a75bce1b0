package io.samstream.stream.engine;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.config.Limits;
import io.samstream.stream.track.TrackingState;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cluster member's writes to the state topic: each running stream's state (progress, tracks, prompts in force and
 * the offset of the last prompts message applied), compressed ({@link StateRecord#encode}) and held to {@code
 * samstream.limits.max-state-bytes} ({@link StateBudget}), and the tombstone of a stream removed. One stream's
 * writes (the engine's thread at its state frames, the member's at prompt changes) are made one at a time, so the
 * last record of a key holds the newest prompts. Thread-safe.
 */
final class StateWriter {
    private static final Logger log = LoggerFactory.getLogger(StateWriter.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final KafkaProducer<String, byte[]> producer;
    private final String topic;
    private final String instanceId;
    private final Limits limits;
    private final EngineMetrics metrics;
    private final StateBudget budget;
    private final AtomicLong written = new AtomicLong();
    /** Each running stream's last state record written, for prompt changes. */
    private final Map<String, ObjectNode> lastStates = new ConcurrentHashMap<>();
    /** Each stream's offset of the last prompts message applied to it (kept in its state), -1 for none. */
    private final Map<String, Long> promptsApplied = new ConcurrentHashMap<>();
    /** One lock per stream for its writes (not the handle's own monitor, which the pipeline uses). */
    private final Map<String, Object> locks = new ConcurrentHashMap<>();

    StateWriter(KafkaProducer<String, byte[]> producer, String topic, String instanceId, Limits limits,
            EngineMetrics metrics) {
        this.producer = producer;
        this.topic = topic;
        this.instanceId = instanceId;
        this.limits = limits;
        this.metrics = metrics;
        this.budget = new StateBudget(limits);
    }

    /** The states' size budget: prompt changes that would make a state too large are refused by it. */
    StateBudget budget() {
        return budget;
    }

    /** The state records the topic acknowledged. */
    long written() {
        return written.get();
    }

    /** The offset of the last prompts message applied to {@code stream}, -1 for none. */
    long promptsApplied(String stream) {
        return promptsApplied.getOrDefault(stream, -1L);
    }

    /** {@code stream}'s prompts are those of the prompts topic up to {@code offset}. */
    void applied(String stream, long offset) {
        promptsApplied.put(stream, offset);
    }

    /** {@code stream} starts with the prompts of its definition alone. */
    void noPromptsApplied(String stream) {
        promptsApplied.remove(stream);
    }

    /** The hash a state names its definition by: a state of another definition is not taken up. */
    static String hash(String json) {
        return Integer.toHexString(json.hashCode()) + "-" + json.length();
    }

    /**
     * Writes a stream's state: its progress, its tracks (when given) and its prompts in force. Nothing before its
     * first published frame, unless it ended.
     */
    void write(StreamHandle h, String json, boolean ended, Optional<? extends TrackingState> tracking) {
        synchronized (lock(h)) {
            long frame = h.lastPublished();
            if (frame < 0 && !ended) {
                return;
            }
            ObjectNode o = JSON.createObjectNode();
            o.put("stream", h.id()).put("engine", instanceId).put("definition", hash(json)).put("frame", frame)
                    .put("pts_ms", h.lastPublishedPts()).put("ended", ended);
            tracking.ifPresent(s -> o.set(s.key(), s.toJson()));
            if (!ended) {
                lastStates.put(h.id(), o);
            }
            send(h, o);
        }
    }

    /**
     * A prompt change was applied to the stream: its last state written again with the prompts now in force (or,
     * before its first published frame, a state of prompts only, to go on from its first frame).
     */
    void promptsChanged(StreamHandle h, String json) {
        synchronized (lock(h)) {
            ObjectNode last = lastStates.get(h.id());
            ObjectNode o;
            if (last != null) {
                o = last.deepCopy();
            } else {
                o = JSON.createObjectNode();
                o.put("stream", h.id()).put("engine", instanceId).put("definition", hash(json)).put("frame", -1L)
                        .put("pts_ms", -1L).put("ended", false);
            }
            send(h, o);
        }
    }

    /** The stream was removed: its state goes too (a tombstone), and what is kept for it here. */
    void removed(String stream) {
        forget(stream);
        send(stream, null);
    }

    /** Forgets what is kept for {@code stream} (it runs elsewhere now, or no more). */
    void forget(String stream) {
        lastStates.remove(stream);
        promptsApplied.remove(stream);
        locks.remove(stream);
        budget.forget(stream);
    }

    /** Keeps what is kept for the streams {@code keep} says, forgets the others'. */
    void retain(Predicate<String> keep) {
        lastStates.keySet().removeIf(keep.negate());
        locks.keySet().removeIf(keep.negate());
        budget.retain(keep);
        promptsApplied.keySet().removeIf(keep.negate());
    }

    /** Sends what is buffered and waits for it. */
    void flush() {
        producer.flush();
    }

    /** Sends what is buffered, within {@code timeout}, and closes the producer. */
    void close(Duration timeout) {
        producer.close(timeout);
    }

    private Object lock(StreamHandle h) {
        return locks.computeIfAbsent(h.id(), id -> new Object());
    }

    /**
     * Sends a stream's state with its prompts as of its frame and the offset of the last prompt applied. Prompt
     * changes that would make it larger than max-state-bytes are refused before they apply; should the tracks alone
     * pass it, that is logged as an error and counted (it is still sent while Kafka takes it).
     */
    private void send(StreamHandle h, ObjectNode o) {
        o.set("prompts", h.prompts().export(o.path("frame").asLong()).toJson());
        o.put("prompts_offset", promptsApplied(h.id())).put("written_at", Instant.now().toString());
        try {
            byte[] value = StateRecord.encode(o);
            budget.written(h.id(), value.length);
            if (value.length > limits.maxStateBytes()) {
                metrics.controlRejected("state", ControlRejected.TOO_LARGE).increment();
                log.error("cluster: stream {}: its state is {} bytes compressed, more than samstream.limits."
                        + "max-state-bytes = {}", h.id(), value.length, limits.maxStateBytes());
            }
            send(h.id(), value);
        } catch (IOException e) {
            log.warn("cluster: stream {}: state not written: {}", h.id(), Errors.describe(e));
        }
    }

    private void send(String id, byte[] value) {
        try {
            producer.send(new ProducerRecord<>(topic, id, value), (meta, e) -> {
                if (e != null) {
                    log.warn("cluster: stream {}: state not written: {}", id, Errors.describe(e));
                } else {
                    written.incrementAndGet();
                }
            });
        } catch (RuntimeException e) {
            log.warn("cluster: stream {}: state not written: {}", id, Errors.describe(e));
        }
    }
}
