package io.samstream.stream.app;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.samstream.config.SamstreamConfig;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.connectors.kafka.KafkaMaskSink;
import io.samstream.connectors.kafka.KafkaReachability;
import io.samstream.config.TrackingMode;
import io.samstream.gpu.ModelCheckpoints;
import io.samstream.gpu.SamModels;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.sam2.Sam2Tracking;
import io.samstream.gpu.sam3.video.Sam3VideoModel;
import io.samstream.gpu.sam3.video.Sam3VideoSettings;
import io.samstream.stream.engine.ClusterMember;
import io.samstream.stream.engine.Engine;
import io.samstream.stream.engine.EngineMetrics;
import io.samstream.stream.engine.FrameSink;
import io.samstream.stream.engine.FrameSourceFactory;
import io.samstream.stream.engine.GpuLane;
import io.samstream.stream.engine.KafkaFrameSink;
import io.samstream.stream.engine.Segmenter;
import io.samstream.stream.engine.ShutdownBudget;
import io.samstream.stream.engine.StreamHandle;
import io.samstream.stream.engine.PromptsTopicWatcher;
import io.samstream.stream.engine.StreamsTopicWatcher;
import io.samstream.stream.http.HttpServer;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything an engine instance runs, built from the configuration: the Kafka brokers (or the embedded
 * one), the model, the sinks, the engine, its HTTP server (API, console, probes, /metrics), the configured
 * streams, and the streams-topic watcher or cluster membership. Closed in the reverse order.
 */
public final class SamstreamRuntime implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SamstreamRuntime.class);

    private final List<AutoCloseable> resources = new ArrayList<>();
    /** The models: left to the process exit when the engine did not stop in time (a step may still run on one). */
    private final java.util.Set<AutoCloseable> models = java.util.Collections.newSetFromMap(
            new java.util.IdentityHashMap<>());
    /** {@code samstream.shutdown-timeout}: the whole of {@link #close}. */
    private Duration shutdownTimeout = SamstreamConfig.DEFAULT_SHUTDOWN_TIMEOUT;
    /** Where each part of the shutdown must be done by, as fractions of {@link #shutdownTimeout}. */
    static final double STREAMS_END = 0.6;
    static final double ENGINE_END = 0.8;
    static final double SINKS_END = 0.92;
    static final double REST_END = 0.97;
    private final List<StreamHandle> configured = new ArrayList<>();
    private EmbeddedKafkaBroker broker;
    private String bootstrapServers;
    private KafkaClients clients;
    /** How long the engine waits at start for configured Kafka brokers to answer. */
    static final java.time.Duration KAFKA_REACH_TIMEOUT = java.time.Duration.ofSeconds(15);
    private KafkaFrameSink kafkaSink;
    private HttpServer http;
    private StreamsTopicWatcher watcher;
    private PromptsTopicWatcher promptsWatcher;
    private ClusterMember cluster;
    private Engine engine;
    private String modelName;
    private String backendName;

    private boolean closed;

    private SamstreamRuntime() {}

    /**
     * Starts it all.
     *
     * @param sources    opens the streams' sources
     * @param fileSinks  the file sinks for the configured jsonl/overlay folders (given the config), or none
     */
    public static SamstreamRuntime start(SamstreamConfig config, FrameSourceFactory sources,
            Function<SamstreamConfig, Optional<FrameSink>> fileSinks) throws IOException {
        SamstreamRuntime rt = new SamstreamRuntime();
        try {
            rt.startAll(config, sources, fileSinks);
            return rt;
        } catch (IOException | RuntimeException | Error e) {
            rt.close();
            throw e;
        }
    }

    private void startAll(SamstreamConfig config, FrameSourceFactory sources,
            Function<SamstreamConfig, Optional<FrameSink>> fileSinks) throws IOException {
        shutdownTimeout = config.shutdownTimeout();
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        EngineMetrics metrics = new EngineMetrics(registry);

        boolean needsKafka = config.sinks().kafka() || config.streamsTopic().isPresent();
        if (needsKafka) {
            if (config.kafka().embeddedBroker()) {
                Path dir = config.kafka().embeddedBrokerDir(config.sinks());
                boolean reused = java.nio.file.Files.isDirectory(dir) && !isEmpty(dir);
                broker = EmbeddedKafkaBroker.builder().logDir(dir).start();
                resources.add(broker);
                broker.createTopic(config.kafka().masksTopic(), 1, false);
                long earlier = broker.recordCount(config.kafka().masksTopic());
                log.info("no samstream.kafka.bootstrap-servers: started an embedded Kafka broker on {}, data in {} ({};"
                        + " kept after the run: samstream.kafka.embedded-broker-dir)", broker.bootstrapServers(),
                        dir.toAbsolutePath(), reused ? "reused: " + config.kafka().masksTopic() + " holds " + earlier
                                + " records of earlier runs, which this run's follow" : "new");
                bootstrapServers = broker.bootstrapServers();
                clients = KafkaClients.plaintext(bootstrapServers);
            } else {
                bootstrapServers = config.kafka().bootstrapServers().orElseThrow();
                clients = KafkaClients.of(bootstrapServers, config.kafka());
                // Before the model loads: a wrong or down broker, or refused credentials, is a clear error in seconds.
                KafkaReachability.check(clients, KAFKA_REACH_TIMEOUT);
            }
        }

        Path checkpoint = config.checkpoint().orElseGet(BundledModel::locate);
        // One backend per GPU of samstream.gpus (one on the CPU). A CUDA backend sizes its GPU memory for the
        // largest batch the batching stage makes, and its embedding ring for the batches its pipeline holds (in
        // flight + the one being decoded + 1).
        // The checkpoint's keys say SAM or SAM 2.1; samstream.tracking.mode must fit (checked before the model is built).
        StateDict weights = ModelCheckpoints.load(checkpoint);
        ModelCheckpoints.Family family = ModelCheckpoints.family(weights);
        TrackingMode trackingMode = TrackingModes.resolve(config, family, checkpoint);
        // Mask records name the model (a release's file name names the release); a pruned one is another model.
        modelName = BundledModel.modelName(checkpoint)
                + (config.sparsity().twoFour() ? " [" + config.sparsity().describe() + "]" : "");
        // The lanes' models, by the mode resolved above (each lane's tracking follows from its model: GpuLane#tracking).
        List<GpuLane> gpus;
        // SAM 3 and SAM 2.1 run one model on the first GPU of samstream.gpus (SAM 3: its detector's trunk and fusion
        // encoder and its tracker's passes there, the rest on the CPU), or on the CPU.
        int firstGpu = config.gpus().all() || config.gpus().ordinals().isEmpty() ? 0 : config.gpus().ordinals().get(0);
        if (trackingMode == TrackingMode.CONCEPT) {
            Sam3VideoModel conceptModel = ModelCheckpoints.openSam3Video(weights, checkpoint, config.cpuThreads(),
                    config.device(), firstGpu, config.cuda().precision());
            resources.add(conceptModel);
            String where = conceptModel.describe();
            backendName = "SAM 3 concept tracking, " + where + ": " + conceptModel;
            log.info("{}: {}; tracking concepts ({}), detection every {} frame(s)", checkpoint, conceptModel, where,
                    config.tracking().conceptsEveryFrames());
            gpus = List.of(new GpuLane(SamModels.DeviceBackend.CPU, Segmenter.concepts(conceptModel,
                    Sam3VideoSettings.defaults(), modelName), Optional.empty()));
        } else if (trackingMode == TrackingMode.MEMORY) {
            // The whole video step on the first GPU (every stream's objects' memory banks in its memory), or on the CPU.
            // A micro-batch's frames of different streams go through the GPU tracker's passes together.
            Sam2Tracking memoryModel = ModelCheckpoints.openSam2Tracking(weights, config.cpuThreads(), config.device(),
                    firstGpu, config.batching().maxBatch());
            resources.add(memoryModel);
            models.add(memoryModel);
            backendName = "SAM 2.1 memory mode: " + memoryModel.describe();
            log.info("{}: {}; tracking in memory mode, {}", checkpoint, memoryModel.config(), memoryModel.describe());
            gpus = List.of(GpuLane.of(Segmenter.memory(memoryModel, modelName), Optional.empty()));
        } else {
            List<SamModels.DeviceBackend> backends = SamModels.openAll(weights, config.device(), config.gpus(),
                    config.cpuThreads(), config.batching().maxBatch(), config.sparsity(),
                    config.pipeline().inFlight() + 2, config.cuda());
            backends.forEach(b -> resources.add(b.backend()));
            backends.forEach(b -> models.add(b.backend()));
            backendName = backends.size() == 1 ? backends.get(0).backend().name() : String.join("; ", backends
                    .stream().map(b -> "GPU " + b.label() + ": " + b.backend().name()).toList());
            gpus = backends.stream().map(b -> new GpuLane(b.gpu(), new Segmenter(b.backend(), modelName),
                    Discoveries.of(config.discovery(), b.backend(), config.limits()))).toList();
        }

        List<FrameSink> sinks = new ArrayList<>();
        if (config.sinks().kafka()) {
            // In a cluster, records name the engine that published them (a consumer can tell who ran a stream when).
            Optional<String> engineName = config.cluster().enabled()
                    ? Optional.of(ClusterMember.instanceId(config.cluster())) : Optional.empty();
            kafkaSink = new KafkaFrameSink(KafkaMaskSink.create(clients, config.kafka(), engineName), metrics);
            sinks.add(kafkaSink);
            log.info("publishing mask records to {} on {}", config.kafka().masksTopic(), bootstrapServers);
        }
        fileSinks.apply(config).ifPresent(sinks::add);
        FrameSink sink = sinks.isEmpty() ? (r, f) -> java.util.concurrent.CompletableFuture.completedFuture(null)
                : FrameSink.all(sinks);
        resources.add(sink);

        // Each GPU's discovery is its own (GpuLane), none in the settings.
        engine = new Engine(new Engine.Settings(config.batching(), config.pipeline(), config.reconnect(),
                config.tracking().withMode(trackingMode), Optional.empty(), config.limits()), gpus, sources, sink,
                metrics);
        resources.add(engine);
        boolean clustered = config.cluster().enabled();
        if (config.http().enabled()) {
            // Once the model is loaded (the startup probe waits); ready once everything below is started.
            List<Path> folders = new ArrayList<>();
            config.sinks().jsonlDir().ifPresent(folders::add);
            config.sinks().overlayDir().ifPresent(folders::add);
            http = HttpServer.start(new HttpServer.Parts(config.http(), engine,
                    config.metrics().enabled() ? Optional.of(registry::scrape) : Optional.empty(),
                    config.streamDefaults(), Optional.ofNullable(clients), config.streamsTopic(),
                    config.kafka().promptsTopic(), needsKafka,
                    clustered ? Optional.of(ClusterMember.instanceId(config.cluster())) : Optional.empty(),
                    config.cluster().partitions(),
                    clustered ? Optional.of(config.cluster().stateTopic()) : Optional.empty(), folders, modelName,
                    backendName));
            resources.add(http);
        }
        if (needsKafka && !clustered) {
            // Before the streams start, so that a change sent once a stream runs is never missed.
            promptsWatcher = PromptsTopicWatcher.start(engine, clients, config.kafka().promptsTopic(),
                    config.kafka().promptsDeadLetterTopic());
            resources.add(promptsWatcher);
            if (http != null) {
                http.followPrompts(promptsWatcher);
            }
        }
        for (StreamSpec s : config.streams()) {
            configured.add(engine.add(s));
        }
        if (clustered) {
            // The group shares out the streams topic; prompts are read in this engine's partitions only.
            cluster = ClusterMember.start(engine, clients, config.cluster(), config.streamsTopic().orElseThrow(),
                    config.kafka().promptsTopic(), config.kafka().promptsDeadLetterTopic(), config.streamDefaults());
            resources.add(cluster);
            if (http != null) {
                http.followCluster(cluster);
            }
        } else if (config.streamsTopic().isPresent()) {
            watcher = StreamsTopicWatcher.start(engine, clients, config.streamsTopic().get(),
                    config.streamDefaults(), config.kafka().promptsDeadLetterTopic());
            resources.add(watcher);
        }
        if (http != null) {
            http.started();
        }
    }

    private static boolean isEmpty(Path dir) throws IOException {
        try (var entries = java.nio.file.Files.list(dir)) {
            return entries.findAny().isEmpty();
        }
    }

    /** The embedded broker's data folder; empty when brokers are configured or nothing uses Kafka. */
    public Optional<Path> embeddedBrokerDir() {
        return Optional.ofNullable(broker).map(EmbeddedKafkaBroker::logDir);
    }

    public Engine engine() {
        return engine;
    }

    /** The handles of the streams of the configuration file, in its order. */
    public List<StreamHandle> configuredStreams() {
        return List.copyOf(configured);
    }

    /** Where Kafka is ({@code host:port,...}); null when nothing uses Kafka. */
    public String bootstrapServers() {
        return bootstrapServers;
    }

    /** How the engine's Kafka clients are built (brokers, shared security); null when nothing uses Kafka. */
    public KafkaClients kafkaClients() {
        return clients;
    }

    public Optional<KafkaFrameSink> kafkaSink() {
        return Optional.ofNullable(kafkaSink);
    }

    /** The HTTP server (API, console, probes, /metrics); empty when {@code samstream.http.enabled} is off. */
    public Optional<HttpServer> httpServer() {
        return Optional.ofNullable(http);
    }

    /** The prompts-topic watcher; empty when nothing uses Kafka, or in a cluster ({@link ClusterMember#prompts}). */
    public Optional<PromptsTopicWatcher> promptsWatcher() {
        return Optional.ofNullable(promptsWatcher);
    }

    /** This engine's membership of the cluster; empty unless {@code samstream.cluster.enabled}. */
    public Optional<ClusterMember> cluster() {
        return Optional.ofNullable(cluster);
    }

    public Optional<StreamsTopicWatcher> watcher() {
        return Optional.ofNullable(watcher);
    }

    public String modelName() {
        return modelName;
    }

    /** What the model runs on, e.g. "cpu fp32 (16 threads)" or "cuda bf16 (NVIDIA H200, ...)" (benchmarks report it). */
    public String backendName() {
        return backendName;
    }

    /** A runtime over {@code resources} only (closed last to first): for tests of {@link #close}. */
    static SamstreamRuntime ofResources(List<? extends AutoCloseable> resources) {
        SamstreamRuntime rt = new SamstreamRuntime();
        rt.resources.addAll(resources);
        return rt;
    }

    /**
     * Closes everything, last started first, within {@code samstream.shutdown-timeout} in all. Each part has until
     * a share of it: what stops the streams (cluster membership, watchers, HTTP server) until 60 %, the engine
     * (what was decoded published) until 80 %, the sinks (records produced flushed) until 92 %, the rest until
     * 97 %; a part past its share is left behind ({@link BoundedClose}). Idempotent and safe from several threads
     * at once (Ctrl-C's shutdown hook while {@code run} closes): the second caller waits for the first and does
     * nothing.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        ShutdownBudget budget = ShutdownBudget.of(shutdownTimeout);
        boolean engineClosed = false;
        boolean engineStopped = true;
        for (int i = resources.size() - 1; i >= 0; i--) {
            AutoCloseable r = resources.get(i);
            if (r instanceof Engine e) {
                Duration d = budget.until(ENGINE_END);
                java.util.concurrent.atomic.AtomicBoolean clean = new java.util.concurrent.atomic.AtomicBoolean();
                // A little less inside, so that an engine using all of its time still counts as stopped.
                engineStopped = BoundedClose.run("the engine", () -> clean.set(e.close(d.multipliedBy(9).dividedBy(10))),
                        d) && clean.get();
                engineClosed = true;
            } else if (r instanceof ClusterMember c) {
                Duration d = budget.until(STREAMS_END);
                BoundedClose.run("the cluster membership", () -> c.close(d), d);
            } else if (r instanceof FrameSink s) {
                Duration d = budget.until(SINKS_END);
                BoundedClose.run("the sinks", () -> s.close(d), d);
            } else if (!engineStopped && models.contains(r)) {
                log.warn("closing: the model is left to the process exit (a step may still run on it)");
            } else {
                BoundedClose.run(r.getClass().getSimpleName(), r::close,
                        budget.until(engineClosed ? REST_END : STREAMS_END));
            }
        }
        resources.clear();
        log.info("closed in {} ms (samstream.shutdown-timeout: {} s)", budget.elapsed().toMillis(),
                shutdownTimeout.toMillis() / 1000.0);
    }
}
