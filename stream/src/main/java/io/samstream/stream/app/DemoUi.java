package io.samstream.stream.app;

import io.samstream.config.ClusterSettings;
import io.samstream.config.EngineSettings;
import io.samstream.config.HttpSettings;
import io.samstream.config.PromptSpec;
import io.samstream.config.SamstreamConfig;
import io.samstream.config.StreamSpec;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CountDownLatch;

/**
 * {@code samstream demo --ui}: the demo's scene as a live stream (endless, paced at its frame rate, its shapes moving
 * at a tenth of the clip's speed so they are easy to point at) with the web console on 127.0.0.1, until Ctrl-C. Two
 * of its four shapes are prompted (ids 1 and 2, their boxes in frame 0, as in {@code samstream demo}); click the
 * others in the console to follow them. Masks go to the Kafka masks topic (the embedded broker unless the
 * configuration names brokers, its data in DIR/kafka-data). Batches of one frame, one in flight: the picture clicked on
 * is the newest. Scene-cut detection is off: on a CPU that falls behind the live scene, the frames tracked lie far
 * apart, which the detector would take for cuts.
 */
public final class DemoUi {
    static final String STREAM = "demo";
    /** The scene: the demo clip's (size, rate, seed), live, its shapes at a tenth of its speed. */
    public static final String LOCATION = "testpattern:" + 320 + "x" + 240 + "@12?seed=0&live=true&speed=0.1";
    /** How many of the scene's shapes are prompted at the start (ids 1, 2, ...); the others are for clicks. */
    public static final int PROMPTED = 2;

    private DemoUi() {}

    /** The demo's configuration: {@code base}'s model, device and Kafka; the live scene; the console on 127.0.0.1. */
    static SamstreamConfig config(SamstreamConfig base, Optional<Demo.Model> model, Path out, OptionalInt port) {
        Optional<Path> checkpoint = model.isPresent() ? Optional.of(model.get().locate()) : base.checkpoint();
        List<PromptSpec.ObjectPrompt> boxes = Demo.firstFrameBoxes().objects();
        PromptSpec prompts = Demo.Model.prompts(model,
                new PromptSpec(boxes.subList(0, Math.min(PROMPTED, boxes.size())), 0));
        StreamSpec stream = new StreamSpec(STREAM, LOCATION, StreamSpec.Live.TRUE, base.streamDefaults().decoder(), prompts);
        HttpSettings h = base.http();
        HttpSettings http = new HttpSettings(true, "127.0.0.1", port.orElse(h.port()), h.token(), h.tls(),
                h.maxViewers(), h.previewFps(), h.maxBodyBytes(), h.promptRate());
        // A live stream keeps the newest frame when the engine is behind: on a slow CPU the frames tracked lie far apart,
        // and a gap of many frames looks like a scene cut to the tracker (every object lost). The scene has no cuts.
        EngineSettings.Tracking t = base.tracking();
        EngineSettings.Tracking tracking = new EngineSettings.Tracking(t.enabled(), t.lostAfter(), t.minPredictedIou(),
                t.minStability(), t.mergeIou(), t.hiddenLostAfter(), t.minAppearance(), 0, t.reidWindow(),
                t.reidAppearance(), t.mode(), t.cameraMotion(), t.reidSearch(), t.reidSearchSpeed(),
                t.memoryForgetAfter(), t.memoryFoundAfter());
        return new SamstreamConfig(checkpoint, base.device(), base.cpuThreads(),
                base.kafka().embeddedBrokerDir().isPresent() ? base.kafka()
                        : base.kafka().withEmbeddedBrokerDir(out.resolve("kafka-data")),
                List.of(stream), base.streamDefaults(),
                // One live stream: batches of one frame, one in flight, so that the frame shown is the newest one
                // (batching a behind stream's frames adds their model time to every frame's latency).
                new EngineSettings.Batching(1, base.batching().maxLatency()),
                new EngineSettings.Pipeline(1, base.pipeline().pendingAcks(), base.pipeline().sinkThreads()),
                base.reconnect(),
                new EngineSettings.Sinks(true, Optional.empty(), Optional.empty()), base.metrics(), Optional.empty(),
                tracking, base.discovery(), base.sparsity(), ClusterSettings.OFF, base.gpus(), base.cuda(),
                base.limits(), http);
    }

    /** Starts the demo's engine and console (tests run it like this, on a free port). */
    public static SamstreamRuntime start(SamstreamConfig base, Optional<Demo.Model> model, Path out, OptionalInt port)
            throws java.io.IOException {
        Files.createDirectories(out);
        return SamstreamRuntime.start(config(base, model, out, port), VideoConnectors.sources(), c -> Optional.empty());
    }

    /** Runs until Ctrl-C: prints where the console is. */
    public static int run(SamstreamConfig base, Optional<Demo.Model> model, Path out, OptionalInt port,
            PrintWriter print) throws Exception {
        CountDownLatch stopped = new CountDownLatch(1);
        try (SamstreamRuntime rt = start(base, model, out, port)) {
            Thread hook = new Thread(() -> {
                rt.close();
                stopped.countDown();
            }, "samstream-demo-ui-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            String url = rt.httpServer().orElseThrow().url();
            print.printf("samstream demo --ui: stream %s (%s), model %s, masks to Kafka topic %s on %s%n", STREAM,
                    LOCATION, rt.modelName(), rt.kafkaSink().map(k -> k.kafka().topic()).orElse("-"),
                    rt.bootstrapServers());
            print.printf("console: %s%s%n", url, base.http().token().isPresent() ? "  (it asks for samstream.http.token)"
                    : "");
            List<String> concepts = model.map(Demo.Model::concepts).orElse(List.of());
            if (concepts.isEmpty()) {
                print.printf("objects 1-%d follow two of the shapes; click another shape to follow it (shift-click: a"
                        + " background point, drag: a box). Ctrl-C stops.%n", PROMPTED);
            } else {
                print.printf("looking for %s: each shape found is followed under its own id. Ctrl-C stops.%n",
                        String.join(" and ", concepts));
            }
            print.flush();
            java.util.concurrent.CompletableFuture<Void> stop = java.util.concurrent.CompletableFuture.runAsync(() -> {
                try {
                    stopped.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            java.util.concurrent.CompletableFuture.anyOf(stop, rt.engine().pipelineDone().toCompletableFuture())
                    .exceptionally(e -> null).join();
            return stopped.getCount() == 0 ? 0 : 1;
        }
    }
}
