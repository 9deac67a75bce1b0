package io.samstream.stream.http;

import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.stream.engine.LogSafe;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;

/**
 * Whether the engine's sinks are reachable, for the readiness probe: the Kafka brokers answer (an admin call every
 * {@link #EVERY}, on a thread of its own, so a probe never waits on Kafka) and the output folders can be written.
 */
final class SinkProbe implements AutoCloseable {
    static final Duration EVERY = Duration.ofSeconds(5);
    private static final Duration TIMEOUT = Duration.ofSeconds(4);

    private final List<Path> folders;
    private final Admin admin;
    private final ScheduledExecutorService timer;
    private volatile Optional<String> kafkaProblem = Optional.of("not checked yet");

    /**
     * @param kafka   the clients of the mask sink's brokers; null when nothing is published to Kafka
     * @param folders the jsonl and overlay folders (written into per stream)
     */
    SinkProbe(KafkaClients kafka, List<Path> folders) {
        this.folders = List.copyOf(folders);
        if (kafka == null) {
            admin = null;
            timer = null;
            kafkaProblem = Optional.empty();
            return;
        }
        admin = kafka.admin("samstream-http-ready", Map.of());
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "samstream-sink-probe");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(this::checkKafka, 0, EVERY.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void checkKafka() {
        try {
            int nodes = admin.describeCluster(new DescribeClusterOptions().timeoutMs((int) TIMEOUT.toMillis())).nodes()
                    .get(TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS).size();
            kafkaProblem = nodes > 0 ? Optional.empty() : Optional.of("the Kafka cluster reports no brokers");
        } catch (Exception e) {
            Throwable c = e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e;
            kafkaProblem = Optional.of("Kafka's brokers do not answer: " + LogSafe.of(c.toString()));
        }
    }

    /** Empty when every sink is reachable; else what is not. */
    Optional<String> problem() {
        Optional<String> k = kafkaProblem;
        if (k.isPresent()) {
            return k;
        }
        for (Path f : folders) {
            Path existing = f;
            while (existing != null && !Files.exists(existing)) {
                existing = existing.getParent(); // a folder made at a stream's first record: its parent must do
            }
            if (existing == null || !Files.isWritable(existing)) {
                return Optional.of("the output folder " + f + " cannot be written");
            }
        }
        return Optional.empty();
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
            admin.close(Duration.ofSeconds(2));
        }
    }
}
