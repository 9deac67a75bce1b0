package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.PromptSpec;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import io.samstream.connectors.kafka.KafkaMaskSink;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.record.MaskRecordJson;
import io.samstream.connectors.sink.FfmpegVideoWriter;
import io.samstream.connectors.sink.OverlayVideoWriter;
import io.samstream.connectors.video.FrameSource;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.model.SamBackend;
import io.samstream.stream.app.VideoConnectors;
import io.samstream.testkit.connectors.MaskTopics;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Finding 6 of issue #31: a valid MPEG-TS whose resolution changes mid-stream (320x240 to 640x480) killed its
 * stream ("overlay ... is 320x240, frame 30 is 640x480") and the published count said 30 where masks.jsonl and
 * Kafka held 33. Here such a TS, made by FFmpeg in the test, runs through the engine into Kafka, masks.jsonl and
 * the overlay: the stream ends normally, the overlay has a segment per size, and the published count, the
 * metric, masks.jsonl and Kafka all hold every frame.
 */
@Timeout(300)
class ResolutionChangeTest {
    static final int SMALL = 30;
    static final int LARGE = 12;

    @TempDir
    Path dir;

    @Test
    void aStreamWhoseFrameSizeChangesGoesOnAndItsCountsAgree() throws Exception {
        Path ts = dir.resolve("switch.ts");
        try (OutputStream out = Files.newOutputStream(ts)) {
            out.write(Files.readAllBytes(write(dir.resolve("a.ts"), 320, 240, SMALL, 0)));
            out.write(Files.readAllBytes(write(dir.resolve("b.ts"), 640, 480, LARGE, SMALL * 100L)));
        }
        int total = SMALL + LARGE;
        EngineMetrics metrics = EngineMetrics.inMemory();
        Path outDir = dir.resolve("out");
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(); SamBackend backend = TestSources.tinyBackend()) {
            broker.createTopic("switch-masks", 1, false);
            FrameSink sinks = FrameSink.all(List.of(
                    new KafkaFrameSink(KafkaMaskSink.builder(broker.bootstrapServers(), "switch-masks").build(), metrics),
                    FileSinks.underFolders(Optional.of(outDir), Optional.of(outDir))));
            StreamHandle.Result r;
            try (sinks; Engine engine = new Engine(TestSources.settings(4, 1, 16), new Segmenter(backend, "tiny256"),
                    VideoConnectors.sources(), sinks, metrics)) {
                PromptSpec prompts = new PromptSpec(List.of(new PromptSpec.ObjectPrompt(1, null,
                        new double[] {20, 20, 120, 100})), 0);
                StreamHandle h = engine.add(new StreamSpec("switch", ts.toString(), StreamSpec.Live.FALSE,
                        StreamSpec.Decoder.CPU, prompts));
                r = h.result().toCompletableFuture().get(240, TimeUnit.SECONDS);
            }
            assertEquals(StreamHandle.State.ENDED, r.state(), () -> r.error().map(Throwable::getMessage).orElse(""));
            assertEquals(total, r.decoded());
            assertEquals(total, r.published(), "the published count");
            assertEquals(total, metrics.registry().get("samstream.frames.published").tag("stream", "switch").counter()
                    .count(), "samstream_frames_published_total");
            List<String> lines = Files.readAllLines(outDir.resolve("switch").resolve("masks.jsonl"));
            assertEquals(total, lines.size(), "masks.jsonl");
            List<MaskRecord> records = MaskTopics.readAll(broker.bootstrapServers(), "switch-masks", total,
                    Duration.ofSeconds(60));
            assertEquals(total, records.size(), "Kafka");
            for (int i = 0; i < total; i++) {
                MaskRecord k = records.get(i);
                assertEquals(i, k.frame());
                assertEquals(i < SMALL ? 320 : 640, k.width(), "frame " + i);
                assertEquals(k, MaskRecordJson.read(lines.get(i).getBytes(StandardCharsets.UTF_8)));
            }
        }
        Path overlay = outDir.resolve("switch").resolve(OverlayVideoWriter.FILE_NAME);
        assertEquals(SMALL, frames(overlay, 320));
        assertEquals(LARGE, frames(OverlayVideoWriter.segmentFile(overlay, 1), 640));
        assertTrue(Files.notExists(OverlayVideoWriter.segmentFile(overlay, 2)));
    }

    /** {@code frames} frames of the test pattern at {@code w} x {@code h}, pts from {@code firstPts}, as MPEG-TS. */
    private static Path write(Path file, int w, int h, int frames, long firstPts) throws IOException {
        try (FrameSource pattern = new TestPatternSource("gen", w, h, 10, frames, 3, false);
             FfmpegVideoWriter writer = FfmpegVideoWriter.open(file, w, h, 10, null, Map.of())) {
            VideoFrame f;
            while ((f = pattern.next()) != null) {
                writer.write(f.rgb(), firstPts + f.ptsMillis());
            }
        }
        return file;
    }

    private static int frames(Path video, int width) throws IOException {
        int n = 0;
        try (FrameSource s = VideoConnectors.sources().open(new StreamSpec("check", video.toString(),
                StreamSpec.Live.FALSE, StreamSpec.Decoder.CPU, new PromptSpec(List.of(), 0)))) {
            for (VideoFrame f; (f = s.next()) != null; n++) {
                assertEquals(width, f.width(), video.getFileName().toString());
            }
        }
        return n;
    }
}
