package io.samstream.bench;

import io.samstream.config.ConfigLoader;
import io.samstream.config.Device;
import io.samstream.config.EngineSettings;
import io.samstream.config.PromptSpec;
import io.samstream.config.SamstreamConfig;
import io.samstream.config.StreamSpec;
import io.samstream.config.TrackingMode;
import io.samstream.connectors.video.DecoderPreference;
import io.samstream.connectors.video.FrameSources;
import io.samstream.connectors.video.SourceSpec;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.gpu.ModelCheckpoints;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.cuda.sam2.CudaSam2Tracker;
import io.samstream.gpu.sam2.Sam2Shapes;
import io.samstream.gpu.sam2.Sam2Tracking;
import io.samstream.stream.engine.Engine;
import io.samstream.stream.engine.EngineMetrics;
import io.samstream.stream.engine.FrameSink;
import io.samstream.stream.engine.Segmenter;
import io.samstream.stream.engine.StreamHandle;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * SAM 2.1 memory mode ({@code samstream.tracking.mode = memory}) at engine level: N live test-pattern cameras paced at
 * 30 frames/s (keep the newest frame when behind), each with K objects given a box on frame 0 (the pattern's shapes
 * first, then boxes on a grid), tracked by the SAM 2.1 model from then on. Per row: frames published and dropped,
 * frames/s in total and per stream, capture-to-publish latency p50/p99, and the device memory in use after a tenth of
 * the run and at its end (a bank per object: flat while the objects stay).
 *
 * <pre>java -cp ... io.samstream.bench.MemoryModeBench OUT.md [--model hiera_tiny|hiera_base_plus | --checkpoint CKPT
 *      | --stand-in MS] [--device cuda|cpu] [--live 1,4,8,16] [--objects 1,4] [--seconds 60] [--size 1920x1080]
 *      [--max-batch 8]</pre>
 *
 * {@code --model} takes random weights at a release's shapes (input 1024: what the step costs, not what it finds);
 * {@code --checkpoint} a SAM 2.1 checkpoint; {@code --stand-in MS} a stand-in whose call sleeps MS ms a frame
 * ({@link StandInSam2}: the engine's host work alone against a model of that speed, on any machine). The engine's
 * other settings are reference.conf's (memory mode's lost objects included), batches of {@code --max-batch} frames. Records go to a sink that takes them at once (no Kafka):
 * the figures are the engine's, decode of the generated frames included.
 */
public final class MemoryModeBench {
    private MemoryModeBench() {}

    /** One row's figures. */
    /**
     * One row; {@code meanBatch}: frames a batch took to the model's stage, on average; {@code modelMsPerFrame}: a
     * model call's time over its frames, averaged over the calls (so frames/s x that / 1000 is roughly the share of
     * the wall time the model's calls took: near 1, the model is the limit; well below, the host is); {@code
     * maskMs}: an object's mask made at the frame's size on the host pool (stage {@code mask-summary}), on average;
     * {@code finishWaitShare}: the share of the wall time the model's stage waited for earlier calls' frames to be
     * finished before it could call again (stage {@code finish-wait}): near 0, the host keeps up with the model.
     */
    record Row(int streams, int objects, long published, long dropped, double seconds, double p50Ms, double p99Ms,
               long deviceAtTenth, long deviceAtEnd, double meanBatch, double modelMsPerFrame, double maskMs,
               double finishWaitShare) {
        String markdown() {
            return String.format(Locale.ROOT,
                    "| %d | %d | %d | %d | %.1f | %.1f | %.0f | %.0f | %.0f -> %.0f | %.1f | %.2f | %.2f | %.1f %% |",
                    streams, objects, published, dropped, published / seconds, published / seconds / streams, p50Ms,
                    p99Ms, deviceAtTenth / 1048576.0, deviceAtEnd / 1048576.0, meanBatch, modelMsPerFrame, maskMs,
                    100 * finishWaitShare);
        }
    }

    static final String HEADER = "| streams | objects each | published | dropped | frames/s | per stream | p50 ms | p99 ms"
            + " | device MiB (tenth -> end) | mean batch | model ms a frame | host ms a mask | waiting for finishes |\n"
            + "|---|---|---|---|---|---|---|---|---|---|---|---|---|";

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: MemoryModeBench OUT.md [--model hiera_tiny | --checkpoint CKPT | --stand-in MS]"
                    + " [--device cuda|cpu] [--live 1,4,8,16] [--objects 1,4] [--seconds 60] [--size 1920x1080]"
                    + " [--max-batch 8]");
            System.exit(2);
        }
        Path out = Path.of(args[0]);
        String model = "hiera_tiny";
        Path checkpoint = null;
        Double standIn = null;
        Device device = Device.CUDA;
        int[] live = {1, 4, 8, 16};
        int[] objects = {1, 4};
        int seconds = 60;
        int width = 1920;
        int height = 1080;
        int maxBatch = 8;
        for (int i = 1; i < args.length; i++) {
            String value = i + 1 < args.length ? args[i + 1] : null;
            if (value == null) {
                throw new IllegalArgumentException(args[i] + " needs a value");
            }
            switch (args[i++]) {
                case "--model" -> model = value;
                case "--checkpoint" -> checkpoint = Path.of(value);
                case "--stand-in" -> standIn = Double.parseDouble(value);
                case "--device" -> device = Device.parse(value, "--device");
                case "--live" -> live = counts(value, "--live");
                case "--objects" -> objects = counts(value, "--objects");
                case "--seconds" -> seconds = Integer.parseInt(value);
                case "--size" -> {
                    String[] wh = value.split("x");
                    width = Integer.parseInt(wh[0]);
                    height = Integer.parseInt(wh[1]);
                }
                case "--max-batch" -> maxBatch = Integer.parseInt(value);
                default -> throw new IllegalArgumentException("unknown option " + args[i - 1]);
            }
        }
        String name = standIn != null ? "stand-in" : checkpoint != null ? checkpoint.getFileName().toString()
                : model + " (random weights)";
        List<String> rows = new ArrayList<>();
        try (Sam2Tracking tracking = standIn != null ? new StandInSam2(standIn) : ModelCheckpoints.openSam2Tracking(
                checkpoint != null ? CheckpointLoader.load(checkpoint)
                        : Sam2Shapes.random(Sam2Shapes.model(Sam2Shapes.release(model)), 5),
                Runtime.getRuntime().availableProcessors(), device, 0, maxBatch)) {
            String header = String.format(Locale.ROOT, "# SAM 2.1 memory mode, live %dx%d cameras at 30 frames/s%n%n"
                    + "Model: %s on %s; %d s a row, batches of up to %d frames.%n%n%s", width, height, name,
                    tracking.describe(), seconds, maxBatch, HEADER);
            for (int k : objects) {
                for (int n : live) {
                    Row row = run(tracking, n, k, seconds, width, height, maxBatch);
                    rows.add(row.markdown());
                    System.out.println(rows.get(rows.size() - 1));
                    Files.writeString(out, header + "\n" + String.join("\n", rows) + "\n");
                }
            }
        }
    }

    /** {@code streams} live cameras with {@code objects} objects each for {@code seconds}. */
    static Row run(Sam2Tracking tracking, int streams, int objects, int seconds, int width, int height, int maxBatch)
            throws Exception {
        SamstreamConfig defaults = ConfigLoader.load();
        Engine.Settings settings = new Engine.Settings(new EngineSettings.Batching(maxBatch, Duration.ofMillis(20)),
                defaults.pipeline(), defaults.reconnect(), defaults.tracking().withMode(TrackingMode.MEMORY),
                Optional.empty(), defaults.limits());
        ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
        long published = 0;
        long dropped = 0;
        long deviceAtTenth;
        long deviceAtEnd;
        long t0;
        long t1;
        EngineMetrics metrics = EngineMetrics.inMemory();
        try (FrameSink sink = StreamBench.noSink(latencies); Engine engine = new Engine(settings,
                Segmenter.memory(tracking, "bench"),
                spec -> FrameSources.open(new SourceSpec(spec.id(), spec.location(), DecoderPreference.AUTO, Map.of())),
                sink, metrics)) {
            t0 = System.nanoTime();
            List<CompletableFuture<StreamHandle.Result>> done = new ArrayList<>();
            for (int s = 0; s < streams; s++) {
                String location = String.format(Locale.ROOT, "testpattern:%dx%d@30?seed=%d&live=true", width, height,
                        s + 1);
                TestPatternSource scene = new TestPatternSource("cam" + s, width, height, 30, 1, s + 1, true);
                done.add(engine.add(new StreamSpec("cam" + s, location, StreamSpec.Live.TRUE, StreamSpec.Decoder.AUTO,
                        new PromptSpec(boxes(scene, objects, width, height), 0))).result().toCompletableFuture());
            }
            Thread.sleep(seconds * 100L);
            deviceAtTenth = deviceMemory(tracking);
            Thread.sleep(seconds * 900L);
            deviceAtEnd = deviceMemory(tracking);
            for (int s = 0; s < streams; s++) {
                engine.remove("cam" + s);
            }
            for (CompletableFuture<StreamHandle.Result> d : done) {
                StreamHandle.Result r = d.get(120, TimeUnit.SECONDS);
                published += r.published();
                dropped += r.dropped();
            }
            t1 = System.nanoTime();
        }
        long[] l = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
        var batch = metrics.registry().find("samstream.batch.size").summary();
        var model = metrics.registry().find("samstream.decoder.time").timer();
        var mask = metrics.registry().find("samstream.stage.time").tag("stage", "mask-summary").timer();
        var finishWait = metrics.registry().find("samstream.stage.time").tag("stage", "finish-wait").timer();
        double wall = (t1 - t0) / 1e9;
        return new Row(streams, objects, published, dropped, wall, StreamBench.pct(l, 0.5) / 1e6,
                StreamBench.pct(l, 0.99) / 1e6, deviceAtTenth, deviceAtEnd, batch == null ? 0 : batch.mean(),
                model == null ? 0 : model.mean(TimeUnit.MILLISECONDS),
                mask == null ? 0 : mask.mean(TimeUnit.MILLISECONDS),
                finishWait == null ? 0 : finishWait.totalTime(TimeUnit.SECONDS) / wall);
    }

    /** Frame-0 boxes of {@code count} objects: the scene's shapes first, then cells of a 4 x 4 grid. */
    static List<PromptSpec.ObjectPrompt> boxes(TestPatternSource scene, int count, int width, int height) {
        List<PromptSpec.ObjectPrompt> out = new ArrayList<>(count);
        List<TestPatternSource.PatternObject> shapes = scene.objectsAt(0);
        for (int k = 0; k < count; k++) {
            double[] box;
            if (k < shapes.size()) {
                int[] b = shapes.get(k).box();
                box = new double[] {Math.max(0, b[0]), Math.max(0, b[1]), Math.min(width, b[2]), Math.min(height, b[3])};
            } else {
                int cell = (k - shapes.size()) % 16;
                double x0 = (cell % 4) * width / 4.0 + width / 16.0;
                double y0 = (cell / 4) * height / 4.0 + height / 16.0;
                box = new double[] {x0, y0, x0 + width / 8.0, y0 + height / 8.0};
            }
            out.add(new PromptSpec.ObjectPrompt(k + 1, null, box));
        }
        return out;
    }

    private static int[] counts(String value, String option) {
        int[] c = Arrays.stream(value.split(",")).mapToInt(Integer::parseInt).toArray();
        if (c.length == 0 || Arrays.stream(c).anyMatch(v -> v < 1)) {
            throw new IllegalArgumentException(option + " takes positive counts, got " + value);
        }
        return c;
    }

    private static long deviceMemory(Sam2Tracking tracking) {
        return tracking instanceof CudaSam2Tracker cuda ? cuda.context().deviceMemoryUsed() : 0;
    }
}
