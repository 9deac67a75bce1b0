package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.kafka.KafkaMaskSink;
import io.samstream.connectors.kafka.MaskRecord;
import java.net.ServerSocket;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Failed sends are counted and sent again, never dropped as done. */
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
}
