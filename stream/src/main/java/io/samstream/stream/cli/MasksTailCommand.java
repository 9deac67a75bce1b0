package io.samstream.stream.cli;

import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.kafka.MaskRecordDeserializer;
import io.samstream.stream.engine.LogSafe;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code samstream masks tail}: follows the mask topic (every partition, no consumer group, nothing committed)
 * and prints one line per record ({@link MaskLine}), or the record itself with {@code --json}. From the topic's
 * end unless {@code --from-beginning}; until Ctrl-C, or {@code --max} records. A record that is not a mask
 * record is reported on stderr and skipped. A topic that does not exist yet is waited for.
 */
@Command(
        name = "tail",
        mixinStandardHelpOptions = true,
        description = {
            "Follow the mask topic: one line per record (stream, frame, pts, the engine that published it in a"
                    + " cluster, each object's id, score, area and box; hidden and lost ids), until Ctrl-C."
        })
final class MasksTailCommand implements Callable<Integer> {
    private static final Duration POLL = Duration.ofMillis(300);

    @Spec
    CommandSpec spec;

    @Mixin
    KafkaOptions kafka;

    @Option(names = "--stream", paramLabel = "ID", description = "Only this stream's records. Repeatable.")
    List<String> streams = new ArrayList<>();

    @Option(names = "--from-beginning", description = "Start at the oldest record the topic holds, not at its end.")
    boolean fromBeginning;

    @Option(names = "--max", paramLabel = "N", description = "Stop after N records.")
    Long max;

    @Option(names = "--json", description = "Print each record's JSON as it is on the topic, one per line.")
    boolean json;

    private volatile boolean stopping;

    @Override
    public Integer call() throws Exception {
        if (max != null && max < 1) {
            throw new ParameterException(spec.commandLine(), "--max must be at least 1, got " + max);
        }
        KafkaClients clients = kafka.connect();
        String topic = kafka.config().kafka().masksTopic();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Set<String> only = new HashSet<>(streams);
        CountDownLatch done = new CountDownLatch(1);
        long[] printed = {0};
        try (KafkaConsumer<String, byte[]> consumer = TopicReads.consumer(clients, "samstream-cli-tail")) {
            Thread hook = new Thread(() -> {
                stopping = true;
                consumer.wakeup();
                try {
                    done.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "samstream-tail-stop");
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                List<TopicPartition> partitions = awaitTopic(consumer, topic, err);
                if (partitions.isEmpty()) {
                    return 0; // stopped while waiting
                }
                consumer.assign(partitions);
                if (fromBeginning) {
                    consumer.seekToBeginning(partitions);
                } else {
                    consumer.seekToEnd(partitions);
                }
                partitions.forEach(p -> consumer.position(p, kafka.timeout()));
                err.println("samstream: following " + topic + " on " + clients.bootstrapServers()
                        + (fromBeginning ? " from its beginning" : " from its end")
                        + (only.isEmpty() ? "" : ", streams " + String.join(", ", only)) + " (Ctrl-C stops)");
                err.flush();
                MaskRecordDeserializer records = new MaskRecordDeserializer();
                while (!stopping && (max == null || printed[0] < max)) {
                    for (ConsumerRecord<String, byte[]> r : consumer.poll(POLL)) {
                        if (max != null && printed[0] >= max) {
                            break;
                        }
                        if (!only.isEmpty() && r.key() != null && !only.contains(r.key())) {
                            continue;
                        }
                        Optional<String> line = line(records, r, err);
                        if (line.isPresent()) {
                            out.println(line.get());
                            out.flush();
                            printed[0]++;
                        }
                    }
                }
            } catch (WakeupException e) {
                // Ctrl-C: stop reading.
            } finally {
                err.println("samstream: masks tail: " + printed[0] + " record(s)");
                err.flush();
                done.countDown();
                removeHook(hook);
            }
        }
        return 0;
    }

    /** The printed line of one record, or empty (reported on stderr) when it is not a mask record. */
    private Optional<String> line(MaskRecordDeserializer records, ConsumerRecord<String, byte[]> r, PrintWriter err) {
        if (r.value() == null) {
            return Optional.empty();
        }
        MaskRecord record;
        try {
            record = records.deserialize(r.topic(), r.headers(), r.value());
        } catch (RuntimeException e) {
            err.println("samstream: skipped the record at " + r.topic() + "-" + r.partition() + "@" + r.offset() + ": "
                    + LogSafe.of(e.getMessage()));
            err.flush();
            return Optional.empty();
        }
        if (!streams.isEmpty() && !streams.contains(record.stream())) {
            return Optional.empty();
        }
        if (json) {
            // A JSON text's line breaks lie between its tokens (strings cannot hold them raw): spaces keep it one line.
            return Optional.of(new String(r.value(), StandardCharsets.UTF_8).replace('\n', ' ').replace('\r', ' '));
        }
        Header engine = r.headers().lastHeader(MaskRecord.ENGINE_HEADER);
        return Optional.of(MaskLine.of(record, engine == null || engine.value() == null ? Optional.empty()
                : Optional.of(new String(engine.value(), StandardCharsets.UTF_8))));
    }

    /** The topic's partitions, once it exists (the first record an engine publishes creates it); empty when stopped. */
    private List<TopicPartition> awaitTopic(KafkaConsumer<String, byte[]> consumer, String topic, PrintWriter err)
            throws InterruptedException {
        boolean said = false;
        while (!stopping) {
            List<TopicPartition> partitions = TopicReads.partitions(consumer, topic, kafka.timeout());
            if (!partitions.isEmpty()) {
                return partitions;
            }
            if (!said) {
                err.println("samstream: topic " + topic + " does not exist yet: waiting for the first record");
                err.flush();
                said = true;
            }
            Thread.sleep(1000);
        }
        return List.of();
    }

    private static void removeHook(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // The hook is running: it waits for this method's caller to finish.
        }
    }
}
