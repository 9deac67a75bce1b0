package io.samstream.testkit.connectors;

import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.testkit.KafkaTopics;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real Kafka broker (connectors' {@link EmbeddedKafkaBroker}, KRaft, in this JVM) for the tests of a
 * class. Registered on a static field it runs from before the first test to after the last; on an
 * instance field, a fresh one runs for each test:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final KafkaBrokerExtension kafka = KafkaBrokerExtension.create();
 * ... kafka.createTopic("masks", 2, false); new KafkaMaskSink(kafka.bootstrapServers(), ...);
 * ... List<MaskRecord> read = kafka.readMasks("masks", 12);
 * }</pre>
 *
 * The broker's data lies in a folder of the extension's, kept across {@link #stop()} and {@link
 * #restart()} (an outage: the broker comes back on its port with its topics and records) and deleted
 * when the broker's test class or test ends.
 */
public final class KafkaBrokerExtension
        implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
    private final UnaryOperator<EmbeddedKafkaBroker.Builder> configure;
    private EmbeddedKafkaBroker broker;
    private Path dataDir;
    private int port;
    /** The unique id of the extension context that started the broker: the one whose end stops it. */
    private String owner;

    private KafkaBrokerExtension(UnaryOperator<EmbeddedKafkaBroker.Builder> configure) {
        this.configure = configure;
    }

    /** A broker with the embedded broker's defaults. */
    public static KafkaBrokerExtension create() {
        return configured(UnaryOperator.identity());
    }

    /**
     * A broker built with {@code configure} applied to its builder (broker properties, a secure listener;
     * the port and the log directory are the extension's).
     */
    public static KafkaBrokerExtension configured(UnaryOperator<EmbeddedKafkaBroker.Builder> configure) {
        return new KafkaBrokerExtension(configure);
    }

    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        startFor(context);
    }

    @Override
    public synchronized void beforeEach(ExtensionContext context) {
        startFor(context);
    }

    @Override
    public synchronized void afterEach(ExtensionContext context) {
        stopFor(context);
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) {
        stopFor(context);
    }

    /** The running broker. */
    public synchronized EmbeddedKafkaBroker broker() {
        if (broker == null) {
            throw new IllegalStateException(owner == null
                    ? "the Kafka broker runs only while a test of the class that registers it runs"
                    : "the Kafka broker is stopped (stop() without restart())");
        }
        return broker;
    }

    /** {@code 127.0.0.1:<port>}, for clients. */
    public String bootstrapServers() {
        return broker().bootstrapServers();
    }

    /** {@link EmbeddedKafkaBroker#createTopic}: replication factor 1, ready when this returns. */
    public void createTopic(String name, int partitions, boolean compacted) {
        broker().createTopic(name, partitions, compacted);
    }

    /** Stops the broker, keeping its port and data for {@link #restart()}: clients see the broker gone. */
    public synchronized void stop() {
        broker().close();
        broker = null;
    }

    /** Starts the broker again on its port and data (after {@link #stop()}): topics and records are back. */
    public synchronized void restart() {
        if (broker != null) {
            throw new IllegalStateException("the Kafka broker is running: stop() it first");
        }
        if (owner == null) {
            throw new IllegalStateException("the Kafka broker runs only while a test of the class that registers it runs");
        }
        broker = configure.apply(EmbeddedKafkaBroker.builder()).port(port).logDir(dataDir).start();
    }

    /** Every record of {@code topic} ({@link KafkaTopics#readAll}, waiting up to {@link KafkaTopics#WAIT}). */
    public List<ConsumerRecord<String, byte[]>> readAll(String topic, int expected) {
        return KafkaTopics.readAll(bootstrapServers(), topic, expected, KafkaTopics.WAIT);
    }

    /** Every mask record of {@code topic} ({@link MaskTopics#readAll}, waiting up to {@link KafkaTopics#WAIT}). */
    public List<MaskRecord> readMasks(String topic, int expected) {
        return MaskTopics.readAll(bootstrapServers(), topic, expected, KafkaTopics.WAIT);
    }

    /** A producer of string keys and byte values to this broker; the caller closes it. */
    public KafkaProducer<String, byte[]> producer() {
        return KafkaTopics.producer(bootstrapServers());
    }

    private void startFor(ExtensionContext context) {
        if (owner != null) {
            return; // a class-wide broker already runs for this test
        }
        try {
            dataDir = Files.createTempDirectory("samstream-kafka-test-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make a folder for the test broker's data", e);
        }
        owner = context.getUniqueId();
        broker = configure.apply(EmbeddedKafkaBroker.builder()).port(0).logDir(dataDir).start();
        port = broker.port();
    }

    private void stopFor(ExtensionContext context) {
        if (owner == null || !owner.equals(context.getUniqueId())) {
            return;
        }
        try {
            if (broker != null) {
                broker.close();
            }
        } finally {
            broker = null;
            owner = null;
            delete(dataDir);
        }
    }

    private static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete the test broker's data in " + dir, e);
        }
    }
}
