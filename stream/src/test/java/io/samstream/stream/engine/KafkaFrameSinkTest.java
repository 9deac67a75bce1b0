package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import io.samstream.connectors.kafka.KafkaMaskSink;
import io.samstream.connectors.record.MaskRecord;
import java.net.ServerSocket;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Failed sends are counted and sent again (when retriable), never dropped as done. */
@Timeout(60)
class KafkaFrameSinkTest {
    @Test
    void aFailedSendIsCountedAndRetriedNotAcknowledged() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // nothing listens there once closed
        }
        EngineMetrics metrics = EngineMetrics.inMemory();
        KafkaMaskSink kafka = KafkaMaskSink.builder("127.0.0.1:" + port, "masks")
                .producerProperties(Map.of("delivery.timeout.ms", "600", "request.timeout.ms", "500",
                        "linger.ms", "0", "max.block.ms", "500"))
                .build();
        KafkaFrameSink sink = new KafkaFrameSink(kafka, metrics);
        MaskRecord record = new MaskRecord("s", 0, 0, Instant.now(), 8, 8, "m", List.of());
        CompletableFuture<Void> done = sink.accept(record, null).toCompletableFuture();
        while (metrics.sendErrorCount() < 2) {
            Thread.sleep(50);
        }
        assertFalse(done.isDone(), "a record that was not acknowledged is not done");
        sink.close();
        ExecutionException e = assertThrows(ExecutionException.class, () -> done.get(30, TimeUnit.SECONDS));
        assertTrue(e.getCause() != null);
    }

    @Test
    void aNonRetriableFailureFailsTheRecordAtOnceNamingTheStream() throws Exception {
        EngineMetrics metrics = EngineMetrics.inMemory();
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start()) {
            broker.createTopic("masks-small", 1, false);
            KafkaMaskSink kafka = KafkaMaskSink.builder(broker.bootstrapServers(), "masks-small")
                    .producerProperties(Map.of("max.request.size", "100")).build();
            try (KafkaFrameSink sink = new KafkaFrameSink(kafka, metrics)) {
                MaskRecord record = new MaskRecord("cam-7", 3, 0, Instant.now(), 8, 8, "m", List.of());
                CompletableFuture<Void> done = sink.accept(record, null).toCompletableFuture();
                ExecutionException e = assertThrows(ExecutionException.class, () -> done.get(20, TimeUnit.SECONDS));
                String message = e.getCause().getMessage();
                assertTrue(message.contains("cam-7") && message.contains("RecordTooLargeException"), message);
                assertEquals(1.0, metrics.sendRejectedCount());
                assertEquals(1.0, metrics.sendErrorCount(), "not sent again");
            }
        }
    }

    @Test
    void onlyRetriableErrorsAreRetried() {
        assertTrue(KafkaFrameSink.retriable(new CompletionException(
                new org.apache.kafka.common.errors.TimeoutException("expired"))));
        assertTrue(KafkaFrameSink.retriable(new CompletionException(new NotLeaderOrFollowerException("moved"))));
        assertTrue(KafkaFrameSink.retriable(new java.util.concurrent.TimeoutException()));
        assertFalse(KafkaFrameSink.retriable(new CompletionException(new RecordTooLargeException("big"))));
        assertFalse(KafkaFrameSink.retriable(new CompletionException(new SerializationException("bad"))));
        assertFalse(KafkaFrameSink.retriable(new TopicAuthorizationException("no")));
        assertFalse(KafkaFrameSink.retriable(new IllegalStateException("the mask sink is closed")));
    }
}
