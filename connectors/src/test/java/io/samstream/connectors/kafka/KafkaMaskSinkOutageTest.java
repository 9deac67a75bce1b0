package io.samstream.connectors.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.samstream.testkit.KafkaTopics;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The broker goes away and comes back on the same port and data: no record is lost or doubled. */
@Timeout(180)
class KafkaMaskSinkOutageTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(90);

    @TempDir
    Path dataDir;

    @Test
    void recordsSentWhileTheBrokerIsDownAreDeliveredWhenItIsBack() throws Exception {
        EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().logDir(dataDir).start();
        int port = broker.port();
        broker.createTopic("masks", 2, false);
        List<CompletableFuture<RecordMetadata>> before = new ArrayList<>();
        List<CompletableFuture<RecordMetadata>> during = new ArrayList<>();
        try (KafkaMaskSink sink = KafkaMaskSink.builder(broker.bootstrapServers(), "masks").build()) {
            for (int f = 0; f < 10; f++) {
                before.add(sink.send(TestRecords.frame(f % 2 == 0 ? "a" : "b", f / 2)).toCompletableFuture());
            }
            CompletableFuture.allOf(before.toArray(CompletableFuture[]::new)).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

            broker.close();
            for (int f = 10; f < 30; f++) {
                during.add(sink.send(TestRecords.frame(f % 2 == 0 ? "a" : "b", f / 2)).toCompletableFuture());
            }
            Thread.sleep(500);
            // Sends did not block (the producer kept the topic's partitions) and nothing was acknowledged.
            assertFalse(during.stream().anyMatch(CompletableFuture::isDone), "acknowledged while the broker was down");
            assertEquals(20, sink.pendingCount());

            broker = EmbeddedKafkaBroker.builder().port(port).logDir(dataDir).start();
            CompletableFuture.allOf(during.toArray(CompletableFuture[]::new)).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertEquals(30, sink.ackedCount());
            assertEquals(0, sink.failedCount());

            List<ConsumerRecord<String, byte[]>> read = KafkaTopics.readAll(broker.bootstrapServers(), "masks", 30, TIMEOUT);
            assertEquals(30, read.size(), "every record exactly once");
            long[] next = {0, 0};
            for (ConsumerRecord<String, byte[]> r : read) {
                MaskRecord record = MaskRecordJson.read(r.value());
                int s = record.stream().equals("a") ? 0 : 1;
                assertEquals(r.key(), record.stream());
                assertEquals(next[s]++, record.frame(), "stream " + record.stream() + " in order, none missing");
            }
            assertEquals(15, next[0]);
            assertEquals(15, next[1]);
        } finally {
            broker.close();
        }
    }
}
