package io.samstream.connectors.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.config.KafkaSettings;
import io.samstream.config.KafkaSettings.Compression;
import io.samstream.testkit.KafkaTopics;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120)
class KafkaMaskSinkTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static EmbeddedKafkaBroker broker;

    @BeforeAll
    static void startBroker() {
        broker = EmbeddedKafkaBroker.start();
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    @Test
    void publishesRecordsThatReadBackFieldForFieldInStreamOrder() throws Exception {
        broker.createTopic("masks", 3, false);
        List<String> streams = List.of("cam-1", "cam-2", "file:/videos/a.mp4");
        int frames = 20;
        Map<String, MaskRecord> sentByStreamFrame = new HashMap<>();
        List<CompletableFuture<RecordMetadata>> acks = new ArrayList<>();
        KafkaSettings settings = new KafkaSettings(Optional.empty(), "masks", "prompts", Compression.LZ4, Map.of());
        try (KafkaMaskSink sink = KafkaMaskSink.create(KafkaClients.plaintext(broker.bootstrapServers()), settings)) {
            for (int f = 0; f < frames; f++) {
                for (String stream : streams) {
                    MaskRecord record = TestRecords.frame(stream, f);
                    sentByStreamFrame.put(stream + "#" + f, record);
                    acks.add(sink.send(record).toCompletableFuture());
                }
            }
            CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertEquals(60, sink.sentCount());
            assertEquals(60, sink.ackedCount());
            assertEquals(0, sink.failedCount());
            assertEquals(0, sink.pendingCount());
        }

        List<ConsumerRecord<String, byte[]>> read = KafkaTopics.readAll(broker.bootstrapServers(), "masks", 60, TIMEOUT);
        assertEquals(60, read.size());
        Map<String, Long> lastFrame = new HashMap<>();
        Map<String, Integer> partitionOf = new HashMap<>();
        try (MaskRecordDeserializer deserializer = new MaskRecordDeserializer()) {
            for (ConsumerRecord<String, byte[]> r : read) {
                Header schema = r.headers().lastHeader(MaskRecord.SCHEMA_HEADER);
                assertEquals("2", new String(schema.value(), StandardCharsets.UTF_8));
                MaskRecord record = deserializer.deserialize(r.topic(), r.headers(), r.value());
                assertEquals(record.stream(), r.key(), "key = stream id");
                assertEquals(sentByStreamFrame.get(record.stream() + "#" + record.frame()), record);
                assertJsonLayout(JSON.readTree(r.value()), record);
                // One stream: one partition, frames in the order they were sent.
                assertEquals(partitionOf.computeIfAbsent(r.key(), k -> r.partition()), r.partition());
                long previous = lastFrame.getOrDefault(r.key(), -1L);
                assertEquals(previous + 1, record.frame(), "frames of " + r.key() + " out of order");
                lastFrame.put(r.key(), record.frame());
            }
        }
        assertEquals(Map.of("cam-1", 19L, "cam-2", 19L, "file:/videos/a.mp4", 19L), lastFrame);
    }

    private static void assertJsonLayout(JsonNode root, MaskRecord record) {
        assertEquals(Set.of("stream", "frame", "pts_ms", "captured_at", "width", "height", "model", "objects"),
                TestRecords.fieldNames(root));
        assertEquals(record.capturedAt().toString(), root.get("captured_at").textValue());
        assertTrue(root.get("captured_at").textValue().endsWith("Z"));
        assertEquals(record.ptsMs(), root.get("pts_ms").longValue());
        for (JsonNode object : root.get("objects")) {
            assertEquals(Set.of("id", "score", "stability", "box", "area", "mask"), TestRecords.fieldNames(object));
            assertEquals(4, object.get("box").size());
            assertEquals(Set.of("size", "counts"), TestRecords.fieldNames(object.get("mask")));
            assertEquals(List.of(record.height(), record.width()),
                    List.of(object.at("/mask/size/0").intValue(), object.at("/mask/size/1").intValue()));
        }
    }

    @Test
    void recordsNameTheirEngineOnlyWhenGivenOne() throws Exception {
        broker.createTopic("masks-engine", 1, false);
        KafkaSettings settings = new KafkaSettings(Optional.empty(), "masks-engine", "prompts", Compression.LZ4, Map.of());
        KafkaClients clients = KafkaClients.plaintext(broker.bootstrapServers());
        try (KafkaMaskSink named = KafkaMaskSink.create(clients, settings, Optional.of("engine-7"));
             KafkaMaskSink anonymous = KafkaMaskSink.create(clients, settings)) {
            named.send(TestRecords.frame("e", 0)).toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            anonymous.send(TestRecords.frame("e", 1)).toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        }
        List<ConsumerRecord<String, byte[]>> read = KafkaTopics.readAll(broker.bootstrapServers(), "masks-engine", 2, TIMEOUT);
        assertEquals("engine-7", new String(read.get(0).headers().lastHeader(MaskRecord.ENGINE_HEADER).value(),
                StandardCharsets.UTF_8));
        assertNull(read.get(1).headers().lastHeader(MaskRecord.ENGINE_HEADER));
        assertThrows(IllegalArgumentException.class, () -> KafkaMaskSink.builder(broker.bootstrapServers(), "x").engine(" "));
    }

    @Test
    void zstdWorksToo() throws Exception {
        broker.createTopic("masks-zstd", 1, false);
        try (KafkaMaskSink sink = KafkaMaskSink.builder(broker.bootstrapServers(), "masks-zstd")
                .compression(Compression.ZSTD).build()) {
            RecordMetadata m = sink.send(TestRecords.frame("z", 2)).toCompletableFuture()
                    .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertEquals(0, m.offset());
        }
        List<ConsumerRecord<String, byte[]>> read = KafkaTopics.readAll(broker.bootstrapServers(), "masks-zstd", 1, TIMEOUT);
        assertEquals(TestRecords.frame("z", 2), MaskRecordJson.read(read.get(0).value()));
    }

    @Test
    void failuresCompleteExceptionallyAndAreCounted() throws Exception {
        broker.createTopic("masks-small", 1, false);
        KafkaMaskSink sink = KafkaMaskSink.builder(broker.bootstrapServers(), "masks-small")
                .producerProperties(Map.of("max.request.size", "2000")).build();
        MaskRecord big = new MaskRecord("s", 0, 0, TestRecords.T0, 4, 4, "m", List.of(new MaskRecord.ObjectMask(
                1, 1, 1, new MaskRecord.Box(0, 0, 4, 4), 16, new MaskRecord.Rle(4, 4, "x".repeat(5000)))));
        CompletionStage<RecordMetadata> tooLarge = sink.send(big);
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> tooLarge.toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(RecordTooLargeException.class, e.getCause());
        sink.send(TestRecords.frame("s", 1)).toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(2, sink.sentCount());
        assertEquals(1, sink.ackedCount());
        assertEquals(1, sink.failedCount());

        sink.close(Duration.ofSeconds(10));
        CompletionStage<RecordMetadata> afterClose = sink.send(TestRecords.frame("s", 2));
        e = assertThrows(ExecutionException.class, () -> afterClose.toCompletableFuture().get(5, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertEquals(2, sink.failedCount());
        assertEquals(0, sink.pendingCount());
    }
}
