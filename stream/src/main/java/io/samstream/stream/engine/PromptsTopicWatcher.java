package io.samstream.stream.engine;

import io.samstream.connectors.kafka.KafkaClients;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
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
    /** Headers of a dead-lettered message ({@link ControlRejections}). */
    public static final String REASON_HEADER = ControlRejections.REASON_HEADER;
    public static final String DETAIL_HEADER = ControlRejections.DETAIL_HEADER;
    public static final String SOURCE_HEADER = ControlRejections.SOURCE_HEADER;
    /** A rejection's detail is cut to this many characters (it quotes parts of the message). */
    static final int DETAIL_MAX_CHARS = ControlRejections.DETAIL_MAX_CHARS;

    /** A check of one parsed message before it is applied (the cluster's state budget); throws to reject it. */
    @FunctionalInterface
    interface Check {
        void check(PromptMessage m) throws PromptRejected;
    }

    private final Engine engine;
    private final ControlRejections rejections;
    private TopicFollower follower;
    /** Told of each message's outcome; none until set. */
    private volatile Outcomes outcomes = (partition, offset, from, rejected) -> { };
    private volatile long accepted;
    private volatile long rejected;

    private PromptsTopicWatcher(Engine engine, KafkaClients clients, Optional<String> deadLetterTopic) {
        this.engine = engine;
        this.rejections = new ControlRejections(engine.metrics(), clients, deadLetterTopic);
    }

    /**
     * Creates the prompts topic (and the dead-letter topic) when missing and starts following the prompts
     * topic from its end; messages produced after this returns are all seen.
     */
    public static PromptsTopicWatcher start(Engine engine, KafkaClients clients, String topic,
            Optional<String> deadLetterTopic) {
        TopicFollower.createIfMissing(clients, topic, false);
        deadLetterTopic.ifPresent(t -> TopicFollower.createIfMissing(clients, t, false));
        PromptsTopicWatcher w = new PromptsTopicWatcher(engine, clients, deadLetterTopic);
        w.follower = TopicFollower.start(clients, topic, "samstream-prompts", TopicFollower.StartAt.END,
                w::handle, w::closeDeadLetters);
        log.info("following prompt changes on topic {}{}", topic,
                deadLetterTopic.map(t -> " (rejected ones go to " + t + ")").orElse(""));
        return w;
    }

    /**
     * A watcher whose messages {@link ClusterMember} reads (only its partitions) and hands to {@link #handle};
     * creates the dead-letter topic when missing.
     */
    static PromptsTopicWatcher withoutFollower(Engine engine, KafkaClients clients, Optional<String> deadLetterTopic) {
        deadLetterTopic.ifPresent(t -> TopicFollower.createIfMissing(clients, t, false));
        return new PromptsTopicWatcher(engine, clients, deadLetterTopic);
    }

    private void closeDeadLetters() {
        rejections.close();
    }

    /**
     * Told of each message's outcome, by its place on the topic (the HTTP API answers a prompt it sent through the
     * topic with what this engine made of it). Called on the watcher's thread: it must return at once.
     */
    @FunctionalInterface
    public interface Outcomes {
        /**
         * @param from     the frame it applies from (when accepted)
         * @param rejected why it was rejected; null when accepted
         */
        void handled(int partition, long offset, long from, PromptRejected rejected);
    }

    /** Sets who is told of each message's outcome. */
    public void setOutcomes(Outcomes listener) {
        this.outcomes = java.util.Objects.requireNonNull(listener, "listener");
    }

    private void tell(ConsumerRecord<String, byte[]> r, long from, PromptRejected rejected) {
        try {
            outcomes.handled(r.partition(), r.offset(), from, rejected);
        } catch (RuntimeException e) {
            log.warn("prompts: telling the outcome of {}-{}@{}: {}", r.topic(), r.partition(), r.offset(),
                    Errors.describe(e));
        }
    }

    /** Applies one message, or rejects it; returns the stream it changed, null when rejected. */
    String handle(ConsumerRecord<String, byte[]> r) {
        return handle(r, m -> {});
    }

    /** As {@link #handle(ConsumerRecord)}, {@code check} passing the message first. */
    String handle(ConsumerRecord<String, byte[]> r, Check check) {
        String reason;
        String detail;
        try {
            PromptMessage m = PromptMessage.parse(r.key(), r.value(), engine.limits().maxPromptBytes());
            check.check(m);
            long from = engine.applyPrompt(m);
            engine.metrics().promptsAccepted(m.op().wireName()).increment();
            accepted++; // after the meter: whoever sees the count sees the meter too
            log.info("prompts: stream {}: {}{} from frame {}", LogSafe.of(m.stream()), m.op().wireName(),
                    m.op() == PromptMessage.Op.RESET ? "" : m.concept() != null ? " \"" + LogSafe.of(m.concept().text())
                            + "\"" : " object " + m.object(), from);
            tell(r, from, null);
            return m.stream();
        } catch (PromptRejected e) {
            reason = e.reason();
            detail = e.getMessage();
        } catch (RuntimeException e) {
            // Whatever else went wrong with one message: it is rejected, the next ones are still read.
            reason = "error";
            detail = Errors.describe(e);
        }
        // The detail quotes the message: escaped and cut (LogSafe) like the key.
        detail = LogSafe.of(detail, DETAIL_MAX_CHARS);
        engine.metrics().promptsRejected(reason).increment();
        rejected++; // after the meter, as above
        log.warn("prompts: rejected the message with key '{}' at {}-{}@{}: {} ({})", LogSafe.of(r.key()), r.topic(),
                r.partition(), r.offset(), detail, reason);
        tell(r, -1, new PromptRejected(reason, detail));
        rejections.countAndDeadLetter("prompts", r, reason, detail);
        return null;
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
        if (follower != null) {
            follower.close();
        } else {
            closeDeadLetters();
        }
    }
}
