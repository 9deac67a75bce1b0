package io.samstream.bench;

import io.samstream.config.EngineSettings;
import io.samstream.config.PromptSpec;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.kafka.KafkaMaskSink;
import io.samstream.connectors.record.MaskRecord;
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
import io.samstream.gpu.cuda.sam.CudaSamBackend;
import io.samstream.gpu.cuda.sam.CudaSamOptions;
import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.image.ResizeLongestSide;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.model.SamConfigInference;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.engine.Engine;
import io.samstream.stream.engine.EngineMetrics;
import io.samstream.stream.engine.FrameSink;
import io.samstream.stream.engine.FrameSourceFactory;
import io.samstream.stream.engine.GpuLane;
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
import java.util.SplittableRandom;
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
 *      [--decoder auto|cpu|nvdec] [--live 1,8,12,16 [--seconds 60] [--sample-every 60] [--live-sink kafka|none]] [--gpus all|0,1]
 *      [--broker jvm|process] [--frame-paths gpu,host] [--repeats 3] [--sparsity 2:4] [--viewers 0,4]</pre>
 *
 * {@code --frame-paths}: {@code gpu} gives the sources' frames to the backend as YUV (NVDEC's left on the GPU, a
 * CPU decoder's as their planes, uploaded), {@code host} as RGB made on the host; each path a row per stream count.
 * {@code --repeats}: runs per row, the row showing the median's.
 *
 * {@code --viewers N,...}: each row again with N live-preview viewers ({@link BenchViewers}: the engine's HTTP server and
 * N WebSocket clients as the web console opens them, 640 wide, at most 10 frames/s) on the first N streams while it
 * runs; the row says the frames/s each viewer received next to the engine's figures (0: no server, no viewer).
 *
 * {@code --broker process} runs the embedded Kafka broker in a JVM of its own ({@link BenchBroker}), as a deployment
 * runs Kafka apart from the engine; {@code jvm} (the default) in the benchmark's own JVM, as the tests and the demo do.
 *
 * {@code --gpus} runs the file rows on those GPUs (one backend each, streams placed least-loaded as the engine
 * does with {@code samstream.gpus}); without it, GPU 0 alone. The live rows and the GPU-alone figures use the
 * first of them; "GPU busy" and "of encoder" are per GPU (frames/s divided by the GPUs).
 *
 * {@code --live} adds, after the file rows, runs of N live test-pattern streams paced at 30 frames/s (keep the
 * newest frame when behind): frames published and dropped, latency, stage times. {@code --sample-every S}
 * prints, every S seconds of a live row, frames published and dropped so far, the heap after a GC, the
 * process's resident memory, its threads and the GPU's memory in use (a memory run: is anything growing?).
 * Without it a live row forces no GC while it runs (a full GC stops every stream): its heap columns are the heap
 * in use, not the heap after a GC.
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
        int[] streamCounts = {1, 4, 16, 32};
        int frames = 150;
        int width = 1920;
        int height = 1080;
        int maxBatch = 8;
        int inFlight = 2;
        int grid = 2;
        DecoderPreference decoder = DecoderPreference.AUTO;
        int[] liveCounts = {};
        int liveSeconds = 60;
        int sampleEvery = 0;
        List<String> framePaths = List.of("gpu");
        int repeats = 1;
        io.samstream.config.ModelSparsity sparsity = io.samstream.config.ModelSparsity.NONE;
        io.samstream.config.GpuSelection gpus = io.samstream.config.GpuSelection.of(0);
        boolean brokerProcess = false;
        int[] viewerCounts = {0};
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
                case "--frame-paths" -> framePaths = List.of(args[++i].split(","));
                case "--repeats" -> repeats = Integer.parseInt(args[++i]);
                case "--sparsity" -> sparsity = io.samstream.config.ModelSparsity.parse(args[++i], "all", "--sparsity",
                        "--sparsity");
                case "--live" -> liveCounts = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
                case "--seconds" -> liveSeconds = Integer.parseInt(args[++i]);
                case "--sample-every" -> sampleEvery = Integer.parseInt(args[++i]);
                case "--live-sink" -> liveSinkNone = switch (args[++i]) {
                    case "kafka" -> false;
                    case "none" -> true;
                    default -> throw new IllegalArgumentException("--live-sink is kafka or none, got " + args[i]);
                };
                case "--gpus" -> gpus = io.samstream.config.GpuSelection.parse(args[++i], "--gpus");
                case "--viewers" -> viewerCounts = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
                case "--broker" -> brokerProcess = switch (args[++i]) {
                    case "jvm" -> false;
                    case "process" -> true;
                    default -> throw new IllegalArgumentException("--broker is jvm or process, got " + args[i]);
                };
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
        weights = io.samstream.gpu.sparse.SparseEncoder.apply(weights, sparsity); // pruned once, as SamModels does
        int threads = Runtime.getRuntime().availableProcessors();
        Path clip = Files.createTempDirectory("samstream-bench").resolve("clip.mp4");
        writeClip(clip, width, height, frames);

        List<Integer> ordinals = device.equals("cpu") ? List.of(0)
                : gpus.resolve(io.samstream.gpu.cuda.CudaAvailability.deviceCount());
        List<String> rows = new ArrayList<>();
        String header;
        List<SamBackend> more = new ArrayList<>();
        try (SamBackend backend = device.equals("cpu") ? new CpuSamBackend(weights, config, threads)
                : new CudaSamBackend(weights, config,
                        CudaSamOptions.builder(maxBatch).decoderThreads(threads).sparsity(sparsity)
                                .embeddingSlots((inFlight + 2) * maxBatch).device(ordinals.get(0)).build());
             BenchBroker broker = BenchBroker.start(brokerProcess);
             AutoCloseable closeMore = () -> more.forEach(SamBackend::close)) {
            List<GpuLane> lanes = new ArrayList<>();
            lanes.add(GpuLane.of(new Segmenter(backend, "bench"), java.util.Optional.empty()));
            for (int o : ordinals.subList(1, ordinals.size())) {
                more.add(new CudaSamBackend(weights, config,
                        CudaSamOptions.builder(maxBatch).decoderThreads(threads).sparsity(sparsity)
                                .embeddingSlots((inFlight + 2) * maxBatch).device(o).build()));
                lanes.add(GpuLane.of(new Segmenter(more.get(more.size() - 1), "bench"), java.util.Optional.empty()));
            }
            GpuAlone alone = backend instanceof CudaSamBackend cuda ? GpuAlone.measure(cuda, maxBatch, grid, width, height)
                    : null;
            header = String.format(Locale.ROOT, "# Engine: %s concurrent %dx%d H.264 streams%n%n"
                    + "Backend %s%s, model %s, %d frames per stream, batches of up to %d, %d in flight,"
                    + " %dx%d point grid per frame, video decoder %s, %s (acks=all).%n%n%s",
                    Arrays.toString(streamCounts).replaceAll("[\\[\\]]", ""), width, height, backend.name(),
                    lanes.size() == 1 ? "" : String.format(Locale.ROOT, " on %d GPUs %s (file rows; GPU busy and of"
                            + " encoder per GPU)", lanes.size(), ordinals),
                    config.describe(), frames, maxBatch, inFlight, grid, grid, decoder, broker.describe(),
                    alone == null ? "" : alone.describe());
            for (int n : streamCounts) {
                for (String path : framePaths) {
                  for (int viewers : viewerCounts) {
                    // The run with the median frames/s of the repeats (the figures of one run stay together).
                    List<String> runs = new ArrayList<>();
                    for (int r = 0; r < repeats; r++) {
                        runs.add(run(backend, lanes, broker, clip, n, frames, maxBatch, inFlight, grid, decoder, alone,
                                path.equals("gpu"), Math.min(viewers, n)));
                        System.err.println("repeat " + r + ": " + runs.get(runs.size() - 1));
                    }
                    runs.sort(java.util.Comparator.comparingDouble(StreamBench::framesPerSecond));
                    rows.add(runs.get(runs.size() / 2) + " " + runs.stream()
                            .map(x -> String.format(Locale.ROOT, "%.1f", framesPerSecond(x)))
                            .collect(java.util.stream.Collectors.joining(", ")) + " |");
                    System.err.println(rows.get(rows.size() - 1));
                    // Written after every row: a run cut short still leaves what it measured.
                    writeTable(out, header, rows);
                  }
                }
            }
            List<String> liveRows = new ArrayList<>();
            for (int n : liveCounts) {
                for (int viewers : viewerCounts) {
                    liveRows.add(runLive(backend, broker, n, liveSeconds, sampleEvery, width, height, maxBatch, inFlight,
                            grid, Math.min(viewers, n)));
                    System.err.println(liveRows.get(liveRows.size() - 1));
                    writeTable(out, header, rows);
                    writeLive(out, width, height, liveSeconds, sampleEvery > 0, broker.describe(), liveRows);
                }
            }
        }
    }

    private static void writeTable(Path out, String header, List<String> rows) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out))) {
            w.print(header);
            w.println("| streams | frames | wall s | frames/s | latency p50 ms | p99 ms | encoder stage ms/frame |"
                    + " decoder stage ms/frame | GPU busy | of encoder img/s | host CPU ms/frame | queue-wait ms |"
                    + " decode ms/wave | postprocess ms/wave | ack ms | device pools | frames in |"
                    + " source + encoder-stage CPU ms/frame | viewers | frames/s each viewer received | viewer frames |"
                    + " frames/s of each repeat (the row: the median's run) |");
            w.println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
            rows.forEach(w::println);
        }
    }

    private static String run(SamBackend backend, List<GpuLane> lanes, BenchBroker broker, Path clip,
            int streams, int frames,
            int maxBatch, int inFlight, int grid, DecoderPreference decoder, GpuAlone alone, boolean gpuFrames,
            int viewerCount) throws Exception {
        EngineMetrics metrics = EngineMetrics.inMemory();
        ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
        FrameSink timed = timedKafka(broker, "bench-" + streams, streams, metrics, latencies);
        Engine.Settings settings = settings(maxBatch, inFlight);
        long t0;
        long t1;
        long cpu0 = processCpuNanos();
        long cpu1;
        Map<String, Long> threads0 = framePathCpu();
        Map<String, Long> threads1;
        String watched;
        // Frames from NVDEC stay in GPU memory (the engine's default with CUDA), or come to the host as RGB.
        FrameSourceFactory sources = spec -> FrameSources.open(new SourceSpec(spec.id(), spec.location(), decoder,
                Map.of()));
        // How the sources decoded: NVDEC, and with its frames kept on the GPU or not (a fallback is logged).
        java.util.Set<String> decoders = java.util.concurrent.ConcurrentHashMap.newKeySet();
        try (timed; Engine engine = new Engine(settings, lanes, new FrameSourceFactory() {
                @Override
                public FrameSource open(StreamSpec spec) throws IOException {
                    return sources.open(spec);
                }

                @Override
                public FrameSourceFactory withGpuFrames(int gpu) {
                    // NVDEC on the stream's GPU, its frames left there (or brought to the host as RGB).
                    FrameSourceFactory used = !gpuFrames ? sources : spec -> FrameSources.open(new SourceSpec(spec.id(),
                            spec.location(), decoder, Map.of()).withOption("decoder.gpu", Integer.toString(gpu))
                            .withGpuFrames(true));
                    return spec -> {
                        FrameSource src = used.open(spec);
                        decoders.add(src instanceof io.samstream.connectors.video.FfmpegFrameSource f
                                ? f.decoderName() + (!gpuFrames ? " (RGB)" : f.hardwareDecoding() ? " (GPU frames)"
                                        : " (YUV planes)") : "?");
                        return src;
                    };
                }
            }, timed, metrics);
             BenchViewers viewers = viewerCount > 0 ? BenchViewers.start(engine, viewerCount, backend.name()) : null) {
            t0 = System.nanoTime();
            List<CompletableFuture<StreamHandle.Result>> done = new ArrayList<>();
            for (int s = 0; s < streams; s++) {
                StreamSpec spec = new StreamSpec("s" + s, clip.toString(), StreamSpec.Live.FALSE, StreamSpec.Decoder.AUTO,
                        new PromptSpec(List.of(), grid));
                done.add(engine.add(spec).result().toCompletableFuture());
                if (s < viewerCount) {
                    viewers.watch("s" + s);
                }
            }
            for (CompletableFuture<StreamHandle.Result> d : done) {
                StreamHandle.Result r = d.get(30, TimeUnit.MINUTES);
                if (r.state() != StreamHandle.State.ENDED) {
                    throw new IllegalStateException(r.streamId() + " " + r.state() + " " + r.error());
                }
            }
            t1 = System.nanoTime();
            cpu1 = processCpuNanos();
            threads1 = framePathCpu();
            watched = viewers == null ? "0 | - | - |" : viewerCount + " | " + viewers.describe();
        }
        long framePath = 0;
        for (Map.Entry<String, Long> t : threads1.entrySet()) {
            framePath += t.getValue() - threads0.getOrDefault(t.getKey(), 0L);
        }
        long total = (long) streams * frames;
        double wall = (t1 - t0) / 1e9;
        long[] l = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
        // Summed over the GPUs (one timer each, tag gpu).
        double encoderMs = metrics.registry().find("samstream.encoder.time").timers().stream()
                .mapToDouble(t -> t.totalTime(TimeUnit.MILLISECONDS)).sum();
        double decoderMs = metrics.registry().find("samstream.decoder.time").timers().stream()
                .mapToDouble(t -> t.totalTime(TimeUnit.MILLISECONDS)).sum();
        double fps = total / wall;
        double fpsPerGpu = fps / lanes.size();
        String busy = alone == null ? "-" : String.format(Locale.ROOT, "%.0f %%", 100 * fpsPerGpu * alone.msPerFrame()
                / 1000);
        String ofEncoder = alone == null ? "-" : String.format(Locale.ROOT, "%.0f %%", 100 * fpsPerGpu
                / alone.encoderImgPerS());
        String pools = backend instanceof CudaSamBackend cuda ? String.format(Locale.ROOT, "%.2f GiB", (cuda.poolBytes()
                + cuda.embeddingRing().bytes() + (cuda.maskDecoder() == null ? 0 : cuda.maskDecoder().poolBytes()))
                / (double) (1L << 30)) : "-";
        return String.format(Locale.ROOT, "| %d | %d | %.1f | %.1f | %.0f | %.0f | %.2f | %.2f | %s | %s | %.2f | %.1f |"
                        + " %.2f | %.2f | %.1f | %s | %s | %.2f | %s", streams, total, wall, fps, pct(l, 0.5) / 1e6,
                pct(l, 0.99) / 1e6, encoderMs / total, decoderMs / total, busy, ofEncoder, (cpu1 - cpu0) / 1e6 / total,
                stageMean(metrics, "queue-wait"), stageMean(metrics, "decode"), stageMean(metrics, "postprocess"),
                stageMean(metrics, "ack"), pools, String.join(" + ", new java.util.TreeSet<>(decoders)),
                framePath / 1e6 / total, watched);
    }

    /** The frames/s column of a row. */
    private static double framesPerSecond(String row) {
        return Double.parseDouble(row.split("\\|")[4].trim());
    }

    private static void writeLive(Path out, int width, int height, int seconds, boolean gcSamples, String broker,
            List<String> rows) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out, java.nio.file.StandardOpenOption.APPEND))) {
            w.printf(Locale.ROOT, "%nLive: N test-pattern streams at %dx%d, paced at 30 frames/s each for %d s"
                    + " (live=true: the newest frame is kept when the engine falls behind; dropped frames counted), %s.%n%n",
                    width, height, seconds, broker);
            w.println("| streams | frames published | dropped | frames/s | latency p50 ms | p99 ms | queue-wait ms |"
                    + " decode ms/wave | postprocess ms/wave | ack ms | heap MiB " + (gcSamples ? "after GC" : "in use")
                    + " (10 % -> end) |"
                    + " device MiB in use (10 % -> end) | viewers | frames/s each viewer received | viewer frames |");
            w.println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
            rows.forEach(w::println);
        }
    }

    /** N live test-pattern streams paced at 30 frames/s for {@code seconds}: what is published, dropped, latency. */
    private static String runLive(SamBackend backend, BenchBroker broker, int streams, int seconds,
            int sampleEvery, int width, int height, int maxBatch, int inFlight, int grid, int viewerCount)
            throws Exception {
        EngineMetrics metrics = EngineMetrics.inMemory();
        ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
        FrameSink timed = liveSinkNone ? noSink(latencies)
                : timedKafka(broker, "bench-live-" + streams, streams, metrics, latencies);
        Engine.Settings settings = settings(maxBatch, inFlight);
        long published = 0;
        long dropped = 0;
        long t0;
        long t1;
        long[] memory0;
        long[] memory1;
        String watched;
        try (timed; Engine engine = new Engine(settings, new Segmenter(backend, "bench"),
                spec -> FrameSources.open(new SourceSpec(spec.id(), spec.location(), DecoderPreference.AUTO, Map.of())),
                timed, metrics);
             BenchViewers viewers = viewerCount > 0 ? BenchViewers.start(engine, viewerCount, backend.name()) : null) {
            t0 = System.nanoTime();
            List<CompletableFuture<StreamHandle.Result>> done = new ArrayList<>();
            for (int s = 0; s < streams; s++) {
                String location = String.format(Locale.ROOT, "testpattern:%dx%d@30?seed=%d&live=true", width, height,
                        s + 1);
                done.add(engine.add(new StreamSpec("live" + s, location, StreamSpec.Live.TRUE, StreamSpec.Decoder.AUTO,
                        new PromptSpec(List.of(), grid))).result().toCompletableFuture());
                if (s < viewerCount) {
                    viewers.watch("live" + s);
                }
            }
            // Live streams never end (an ended live source reconnects): stop them after the run's time. Memory
            // is sampled after the first tenth (warm) and at the end: heap after a GC, and the device's.
            Thread.sleep(seconds * 100L);
            memory0 = sampleEvery > 0 ? memorySample(backend) : memoryInUse(backend);
            long end = t0 + seconds * 1_000_000_000L;
            for (long now = System.nanoTime(); now < end; now = System.nanoTime()) {
                long nap = sampleEvery > 0 ? Math.min(sampleEvery * 1_000_000_000L, end - now) : end - now;
                Thread.sleep(Math.max(1, nap / 1_000_000));
                if (sampleEvery > 0 && System.nanoTime() < end - 1_000_000_000L) {
                    printSample(engine, backend, streams, (System.nanoTime() - t0) / 1e9);
                }
            }
            memory1 = sampleEvery > 0 ? memorySample(backend) : memoryInUse(backend);
            if (sampleEvery > 0 && memory1[0] > 1.5 * memory0[0]) {
                printHeapHistogram(streams);
            }
            printQueues(metrics, streams);
            watched = viewers == null ? "0 | - | - |" : viewerCount + " | " + viewers.describe();
            for (int s = 0; s < streams; s++) {
                engine.remove("live" + s);
            }
            for (CompletableFuture<StreamHandle.Result> d : done) {
                StreamHandle.Result r = d.get(120, TimeUnit.SECONDS);
                published += r.published();
                dropped += r.dropped();
            }
            t1 = System.nanoTime();
            // Held while running (queues) or kept (a leak): the heap once every stream ended and was published.
            long[] after = memorySample(backend);
            System.out.printf(Locale.ROOT, "live row with %d streams: heap %.0f MiB at a tenth, %.0f at the end,"
                    + " %.0f once its streams ended (after a GC)%n", streams, memory0[0] / 1048576.0, memory1[0] / 1048576.0,
                    after[0] / 1048576.0);
            if (after[0] > 1.5 * memory0[0]) {
                printHeapHistogram(streams);
            }
        }
        long[] l = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
        return String.format(Locale.ROOT, "| %d | %d | %d | %.1f | %.0f | %.0f | %.1f | %.2f | %.2f | %.1f |"
                        + " %.0f -> %.0f | %.0f -> %.0f | %s", streams,
                published, dropped, published / ((t1 - t0) / 1e9), pct(l, 0.5) / 1e6, pct(l, 0.99) / 1e6,
                stageMean(metrics, "queue-wait"), stageMean(metrics, "decode"), stageMean(metrics, "postprocess"),
                stageMean(metrics, "ack"), memory0[0] / 1048576.0, memory1[0] / 1048576.0, memory0[1] / 1048576.0,
                memory1[1] / 1048576.0, watched);
    }

    /**
     * What the heap holds (the JVM's class histogram, its largest 20 classes) when a live row's heap grew by half
     * or more between its two samples: where the growth is, in the log.
     */
    private static void printHeapHistogram(int streams) {
        try {
            Object text = java.lang.management.ManagementFactory.getPlatformMBeanServer().invoke(
                    new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                    new Object[] {new String[0]}, new String[] {String[].class.getName()});
            String[] lines = text.toString().split("\n");
            System.out.println("heap grew in the live row with " + streams + " streams; its largest classes:");
            for (int i = 0; i < Math.min(lines.length, 23); i++) {
                System.out.println("  " + lines[i]);
            }
        } catch (Exception e) {
            // A jlinked runtime may not offer the command: the JVM prints the histogram on SIGQUIT when started
            // with -XX:+PrintClassHistogram (tools/device/run-app.sh's stream mode does).
            System.out.println("heap grew in the live row with " + streams + " streams; no class histogram bean (" + e
                    + "): SIGQUIT for -XX:+PrintClassHistogram");
            try {
                new ProcessBuilder("kill", "-QUIT", Long.toString(ProcessHandle.current().pid())).start().waitFor();
                Thread.sleep(3000);
            } catch (IOException | InterruptedException ex) {
                System.out.println("no SIGQUIT: " + ex);
            }
        }
    }

    /**
     * The engine's queue depths, frames and batches in flight and pending acknowledgements at the end of a live row
     * (its gauges): what the engine holds when it falls behind, next to the heap figures.
     */
    private static void printQueues(EngineMetrics metrics, int streams) {
        StringBuilder b = new StringBuilder("live row with " + streams + " streams, at its end:");
        metrics.registry().getMeters().stream()
                .filter(m -> m instanceof io.micrometer.core.instrument.Gauge)
                .filter(m -> m.getId().getName().matches(".*(queue|pending|in\\.flight|frames|tracks).*"))
                .sorted(java.util.Comparator.comparing(m -> m.getId().toString()))
                .forEach(m -> b.append(String.format(Locale.ROOT, "%n  %s%s = %.0f", m.getId().getName(),
                        m.getId().getTags(), ((io.micrometer.core.instrument.Gauge) m).value())));
        System.out.println(b);
    }

    /** {@code --live-sink none}: the live rows' records are dropped at once (what Kafka costs, by its absence). */
    private static boolean liveSinkNone;

    /** A sink that takes each record at once and keeps nothing: capture-to-accept times only. */
    static FrameSink noSink(ConcurrentLinkedQueue<Long> latencies) {
        return new FrameSink() {
            @Override
            public CompletionStage<Void> accept(MaskRecord record, VideoFrame frame) {
                latencies.add(Duration.between(frame.capturedAt(), Instant.now()).toNanos());
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public void close() {
            }
        };
    }

    private static final java.util.concurrent.atomic.AtomicInteger HISTOGRAMS = new java.util.concurrent.atomic.AtomicInteger();

    /** One line of a memory run: frames so far, heap after GC, resident memory, threads, the GPU's memory. */
    private static void printSample(Engine engine, SamBackend backend, int streams, double seconds) {
        long published = 0;
        long dropped = 0;
        for (StreamHandle h : engine.streams()) {
            published += h.published();
            dropped += h.dropped();
        }
        long[] m = memorySample(backend);
        long rssKb = -1;
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    rssKb = Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: no resident size
        }
        if (m[0] > 3L << 30 && HISTOGRAMS.getAndIncrement() < 2) {
            printHeapHistogram(streams); // what holds more than 3 GiB after a GC (twice a run at most)
        }
        System.out.printf(Locale.ROOT, "live sample | %d | %.0f | %d | %d | %.0f | %.0f | %d | %.0f |%n", streams, seconds,
                published, dropped, m[0] / 1048576.0, rssKb / 1024.0,
                java.lang.management.ManagementFactory.getThreadMXBean().getThreadCount(), m[1] / 1048576.0);
    }

    /** Heap in use after a GC, and the GPU's memory in use (0 on the CPU), in bytes. */
    private static long[] memorySample(SamBackend backend) {
        System.gc();
        return memoryInUse(backend);
    }

    /** Heap in use (no GC: garbage included), and the GPU's memory in use (0 on the CPU), in bytes. */
    private static long[] memoryInUse(SamBackend backend) {
        Runtime rt = Runtime.getRuntime();
        long heap = rt.totalMemory() - rt.freeMemory();
        long device = backend instanceof CudaSamBackend cuda ? cuda.context().deviceMemoryUsed() : 0;
        return new long[] {heap, device};
    }

    /** A Kafka sink on a new topic of the broker that adds each record's capture-to-ack time to {@code latencies}. */
    private static FrameSink timedKafka(BenchBroker broker, String topic, int streams, EngineMetrics metrics,
            ConcurrentLinkedQueue<Long> latencies) {
        broker.createTopic(topic, Math.max(1, Math.min(streams, 8)));
        KafkaFrameSink kafka = new KafkaFrameSink(KafkaMaskSink.builder(broker.bootstrapServers(), topic).build(), metrics);
        return new FrameSink() {
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
    }

    private static Engine.Settings settings(int maxBatch, int inFlight) {
        return new Engine.Settings(new EngineSettings.Batching(maxBatch, Duration.ofMillis(20)),
                new EngineSettings.Pipeline(inFlight, 256),
                new EngineSettings.Reconnect(Duration.ofSeconds(1), Duration.ofSeconds(5), 0.2));
    }

    /** The stage's mean time over every GPU's timer. */
    private static double stageMean(EngineMetrics metrics, String stage) {
        var timers = metrics.registry().find("samstream.stage.time").tag("stage", stage).timers();
        long count = timers.stream().mapToLong(io.micrometer.core.instrument.Timer::count).sum();
        return count == 0 ? Double.NaN
                : timers.stream().mapToDouble(t -> t.totalTime(TimeUnit.MILLISECONDS)).sum() / count;
    }

    /**
     * CPU time so far of each thread on a frame's way in (the sources' blocking dispatcher: FFmpeg's decoding
     * and any RGB conversion; the encoder dispatcher: staging and launches), by thread id.
     */
    private static Map<String, Long> framePathCpu() {
        var mx = java.lang.management.ManagementFactory.getThreadMXBean();
        Map<String, Long> out = new java.util.HashMap<>();
        for (java.lang.management.ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (t != null && (t.getThreadName().contains("blocking-dispatcher")
                    || t.getThreadName().contains("encoder-dispatcher"))) {
                long cpu = mx.getThreadCpuTime(t.getThreadId());
                if (cpu > 0) {
                    out.put(t.getThreadId() + ":" + t.getThreadName(), cpu);
                }
            }
        }
        return out;
    }

    /** CPU time of the whole process (every thread: FFmpeg, the engine, Kafka), in nanoseconds. */
    private static long processCpuNanos() {
        var os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : 0;
    }

    /**
     * GPU time per frame of each part measured alone in the same run: the encoder at the engine's batch
     * (events around back-to-back graph replays), the mask decoder on a wave of that many ring embeddings
     * with the grid's prompt sets (events around its kernels), and the post-processing of their masks at
     * the clip's size (wall time of one {@code postprocessWave}, host copies included: an upper bound).
     */
    record GpuAlone(int batch, double encoderMs, double decoderMs, double postprocessMs) {
        double msPerFrame() {
            return encoderMs + decoderMs + postprocessMs;
        }

        double encoderImgPerS() {
            return 1000 / encoderMs;
        }

        String describe() {
            return String.format(Locale.ROOT, "Alone, per frame at batch %d (medians): encoder %.3f ms (%.1f img/s), mask"
                    + " decoder %.3f ms, post-processing %.3f ms (wall, an upper bound); GPU busy = frames/s x their sum."
                    + "%n%n", batch, encoderMs, encoderImgPerS(), decoderMs, postprocessMs);
        }

        static GpuAlone measure(CudaSamBackend cuda, int batch, int grid, int width, int height) {
            int s = cuda.config().imageSize();
            SplittableRandom r = new SplittableRandom(3);
            float[] img = new float[batch * 3 * s * s];
            for (int i = 0; i < img.length; i++) {
                img[i] = (float) r.nextGaussian();
            }
            cuda.stageInput(new Tensor(img, batch, 3, s, s));
            cuda.timeForward(batch, 2);
            double[] enc = new double[5];
            for (int i = 0; i < enc.length; i++) {
                enc[i] = cuda.timeForward(batch, 10) / batch;
            }
            byte[] rgb = new byte[width * height * 3];
            for (int i = 0; i < rgb.length; i++) {
                rgb[i] = (byte) r.nextInt(256);
            }
            List<RgbImage> frames = new ArrayList<>();
            for (int i = 0; i < batch; i++) {
                frames.add(new RgbImage(width, height, rgb));
            }
            List<ImageEmbedding> embeddings = cuda.embedFrames(frames);
            ImageSize original = new ImageSize(height, width);
            ImageSize resized = ResizeLongestSide.preprocessShape(height, width, s);
            List<SamBackend.DecodeRequest> wave = new ArrayList<>();
            for (ImageEmbedding e : embeddings) {
                List<Prompt> prompts = new ArrayList<>();
                for (int gy = 0; gy < grid; gy++) {
                    for (int gx = 0; gx < grid; gx++) {
                        prompts.add(new Prompt(new float[][] {{(gx + 0.5f) * resized.width() / grid,
                                (gy + 0.5f) * resized.height() / grid}}, new int[] {1}, null, null));
                    }
                }
                wave.add(new SamBackend.DecodeRequest(e, prompts, true));
            }
            double[] dec = new double[15];
            double[] post = new double[15];
            for (int i = 0; i < dec.length; i++) {
                List<List<io.samstream.gpu.model.DecoderOutput>> out = cuda.decodeWave(wave);
                dec[i] = cuda.maskDecoder().lastGpuMillis() / batch;
                List<SamBackend.MaskRequest> masks = new ArrayList<>();
                for (List<io.samstream.gpu.model.DecoderOutput> o : out) {
                    // As the engine: each object's best plane, read on the device where the decoder left it.
                    masks.add(new SamBackend.MaskRequest(o.stream().map(io.samstream.gpu.model.DecoderOutput::best)
                            .toList(), resized, original));
                }
                long t0 = System.nanoTime();
                cuda.postprocessWave(masks);
                post[i] = (System.nanoTime() - t0) / 1e6 / batch;
            }
            embeddings.forEach(ImageEmbedding::close);
            return new GpuAlone(batch, median(enc), median(dec), median(post));
        }

        private static double median(double[] v) {
            double[] c = v.clone();
            Arrays.sort(c);
            return c[c.length / 2];
        }
    }

    static double pct(long[] sorted, double q) {
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
