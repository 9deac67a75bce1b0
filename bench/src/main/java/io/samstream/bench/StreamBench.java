package io.samstream.bench;

import io.samstream.config.EngineSettings;
import io.samstream.config.PromptSpec;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import io.samstream.connectors.kafka.KafkaMaskSink;
import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.connectors.sink.FfmpegVideoWriter;
import io.samstream.connectors.video.DecoderPreference;
import io.samstream.connectors.video.FrameSource;
import io.samstream.connectors.video.FrameSources;
import io.samstream.connectors.video.SourceSpec;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuSamBackend;
import io.samstream.gpu.cuda.CudaSamBackend;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.model.SamConfigInference;
import io.samstream.stream.engine.Engine;
import io.samstream.stream.engine.EngineMetrics;
import io.samstream.stream.engine.FrameSink;
import io.samstream.stream.engine.KafkaFrameSink;
import io.samstream.stream.engine.Segmenter;
import io.samstream.stream.engine.StreamHandle;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * The whole engine on N concurrent streams: frames/s and capture-to-ack latency (p50/p99) with the
 * per-stage split, for 1, 4 and 16 streams (or the counts given). Each stream reads the same H.264 clip
 * (written once by FFmpeg from the test pattern, so decoding is part of the path: NVDEC when a GPU is
 * present) as a file: every frame, backpressure, no drops. Masks go to an embedded Kafka broker.
 *
 * <pre>java -cp ... io.samstream.bench.StreamBench OUT.md [--checkpoint CKPT | --random-vit-b] [--device cpu|cuda]
 *      [--streams 1,4,16] [--frames 150] [--size 1920x1080] [--max-batch 8] [--in-flight 2] [--grid 2]
 *      [--decoder auto|cpu|nvdec]</pre>
 *
 * Latency is from the frame's decode (its capture time for a file) to the Kafka acknowledgement of its
 * record, so for files it includes the wait in the pipeline's bounded queues. "Encoder busy" is the
 * encoder's summed time over the wall time: the share of the run the GPU spent in the image encoder (the
 * CUDA backend serializes encodes; on the CPU backend, in-flight encodes overlap and it can pass 100 %).
 */
public final class StreamBench {
    private StreamBench() {}

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        String checkpoint = null;
        boolean random = false;
        String device = "cuda";
        int[] streamCounts = {1, 4, 16};
        int frames = 150;
        int width = 1920;
        int height = 1080;
        int maxBatch = 8;
        int inFlight = 2;
        int grid = 2;
        DecoderPreference decoder = DecoderPreference.AUTO;
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "--checkpoint" -> checkpoint = args[++i];
                case "--random-vit-b" -> random = true;
                case "--device" -> device = args[++i];
                case "--streams" -> streamCounts = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
                case "--frames" -> frames = Integer.parseInt(args[++i]);
                case "--size" -> {
                    String[] wh = args[++i].split("x");
                    width = Integer.parseInt(wh[0]);
                    height = Integer.parseInt(wh[1]);
                }
                case "--max-batch" -> maxBatch = Integer.parseInt(args[++i]);
                case "--in-flight" -> inFlight = Integer.parseInt(args[++i]);
                case "--grid" -> grid = Integer.parseInt(args[++i]);
                case "--decoder" -> decoder = DecoderPreference.parse(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        StateDict weights;
        SamConfig config;
        if (random || checkpoint == null) {
            config = EncoderBench.vitB();
            weights = EncoderBench.randomWeights(config, 1);
        } else {
            weights = CheckpointLoader.load(Path.of(checkpoint));
            config = SamConfigInference.infer(weights);
        }
        int threads = Runtime.getRuntime().availableProcessors();
        Path clip = Files.createTempDirectory("samstream-bench").resolve("clip.mp4");
        writeClip(clip, width, height, frames);

        List<String> rows = new ArrayList<>();
        String header;
        try (SamBackend backend = device.equals("cpu") ? new CpuSamBackend(weights, config, threads)
                : new CudaSamBackend(weights, config, maxBatch, threads);
             EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start()) {
            header = String.format(Locale.ROOT, "# Engine: %s concurrent %dx%d H.264 streams%n%n"
                    + "Backend %s, model %s, %d frames per stream, batches of up to %d, %d in flight,"
                    + " %dx%d point grid per frame, video decoder %s, embedded Kafka (acks=all).%n%n",
                    Arrays.toString(streamCounts).replaceAll("[\\[\\]]", ""), width, height, backend.name(),
                    config.describe(), frames, maxBatch, inFlight, grid, grid, decoder);
            for (int n : streamCounts) {
                rows.add(run(backend, broker, clip, n, frames, maxBatch, inFlight, grid, decoder));
                System.err.println(rows.get(rows.size() - 1));
                // Written after every row: a run cut short still leaves what it measured.
                writeTable(out, header, rows);
            }
        }
    }

    private static void writeTable(Path out, String header, List<String> rows) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out))) {
            w.print(header);
            w.println("| streams | frames | wall s | frames/s | latency p50 ms | p99 ms | encoder ms/frame |"
                    + " decoder ms/frame | encoder busy |");
            w.println("|---|---|---|---|---|---|---|---|---|");
            rows.forEach(w::println);
        }
    }

    private static String run(SamBackend backend, EmbeddedKafkaBroker broker, Path clip, int streams, int frames,
            int maxBatch, int inFlight, int grid, DecoderPreference decoder) throws Exception {
        String topic = "bench-" + streams;
        broker.createTopic(topic, Math.max(1, Math.min(streams, 8)), false);
        EngineMetrics metrics = EngineMetrics.inMemory();
        ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
        KafkaFrameSink kafka = new KafkaFrameSink(KafkaMaskSink.builder(broker.bootstrapServers(), topic).build(), metrics);
        FrameSink timed = new FrameSink() {
            @Override
            public CompletionStage<Void> accept(MaskRecord record, VideoFrame frame) {
                return kafka.accept(record, frame).thenRun(() -> latencies.add(
                        Duration.between(frame.capturedAt(), Instant.now()).toNanos()));
            }

            @Override
            public void close() {
                kafka.close();
            }
        };
        Engine.Settings settings = new Engine.Settings(
                new EngineSettings.Batching(maxBatch, Duration.ofMillis(20)),
                new EngineSettings.Pipeline(inFlight, 256),
                new EngineSettings.Reconnect(Duration.ofSeconds(1), Duration.ofSeconds(5), 0.2));
        long t0;
        long t1;
        try (timed; Engine engine = new Engine(settings, new Segmenter(backend, "bench"),
                spec -> FrameSources.open(new SourceSpec(spec.id(), spec.location(), decoder, Map.of())),
                timed, metrics)) {
            t0 = System.nanoTime();
            List<CompletableFuture<StreamHandle.Result>> done = new ArrayList<>();
            for (int s = 0; s < streams; s++) {
                StreamSpec spec = new StreamSpec("s" + s, clip.toString(), StreamSpec.Live.FALSE, StreamSpec.Decoder.AUTO,
                        new PromptSpec(List.of(), grid));
                done.add(engine.add(spec).result().toCompletableFuture());
            }
            for (CompletableFuture<StreamHandle.Result> d : done) {
                StreamHandle.Result r = d.get(30, TimeUnit.MINUTES);
                if (r.state() != StreamHandle.State.ENDED) {
                    throw new IllegalStateException(r.streamId() + " " + r.state() + " " + r.error());
                }
            }
            t1 = System.nanoTime();
        }
        long total = (long) streams * frames;
        double wall = (t1 - t0) / 1e9;
        long[] l = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
        double encoderMs = metrics.registry().get("samstream.encoder.time").timer().totalTime(TimeUnit.MILLISECONDS);
        double decoderMs = metrics.registry().get("samstream.decoder.time").timer().totalTime(TimeUnit.MILLISECONDS);
        return String.format(Locale.ROOT, "| %d | %d | %.1f | %.1f | %.0f | %.0f | %.2f | %.2f | %.0f %% |", streams, total,
                wall, total / wall, pct(l, 0.5) / 1e6, pct(l, 0.99) / 1e6, encoderMs / total, decoderMs / total,
                100 * encoderMs / 1000 / wall);
    }

    private static double pct(long[] sorted, double q) {
        return sorted.length == 0 ? Double.NaN : sorted[Math.min(sorted.length - 1, (int) Math.floor(q * sorted.length))];
    }

    /** The test pattern (moving shapes on a texture) as an H.264 (or MPEG-4) file FFmpeg decodes. */
    private static void writeClip(Path file, int width, int height, int frames) throws IOException {
        try (FrameSource pattern = new TestPatternSource("bench", width, height, 30, frames, 1, false);
             FfmpegVideoWriter writer = FfmpegVideoWriter.open(file, width, height, 30, null, Map.of())) {
            VideoFrame f;
            while ((f = pattern.next()) != null) {
                writer.write(f.rgb(), f.ptsMillis());
            }
        }
    }
}
