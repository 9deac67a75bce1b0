package io.samstream.stream.engine;

import akka.Done;
import akka.NotUsed;
import akka.actor.ActorSystem;
import akka.japi.Pair;
import akka.stream.KillSwitches;
import akka.stream.UniqueKillSwitch;
import akka.stream.javadsl.Flow;
import akka.stream.javadsl.Keep;
import akka.stream.javadsl.MergeHub;
import akka.stream.javadsl.Sink;
import akka.stream.javadsl.Source;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.samstream.config.EngineSettings;
import io.samstream.config.Limits;
import io.samstream.config.StreamSpec;
import io.samstream.stream.track.Discovery;
import io.samstream.stream.track.StreamTracker;
import io.samstream.stream.track.Tracking;
import io.samstream.stream.track.concept.ConceptTracking;
import io.samstream.stream.track.memory.MemoryTracking;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The streaming engine: per-stream sources merged into one pipeline per GPU (micro-batching, encoder,
 * decoder), whose records merge into one publishing stage (sinks), with streams added and removed while it
 * runs.
 *
 * <pre>
 * stream sources (blocking dispatcher; live: restart with backoff, keep newest; files: backpressure)
 *   -> the stream's GPU (placed when it starts: the least loaded, then sticky):
 *      MergeHub -> DeadlineBatcher(max-batch, max-latency; at once when nothing is in flight on that GPU)
 *      -> encoder (mapAsync in-flight; embeddings stay where the backend keeps them: a device ring on CUDA)
 *      -> decoder (one batch at a time, wave by wave: the k-th frames of all streams decoded and
 *         post-processed together; prompts / tracks -> masks) -> records (run-length encoding, frames in
 *         parallel, in order)
 *   -> MergeHub (every GPU's records) -> sinks (mapAsync pending-acks, in order) -> done
 * </pre>
 *
 * A batch holds frames of one GPU's streams only, and a stream's frames go to its GPU only (NVDEC's frames
 * stay in that GPU's memory). A stream that fails (a corrupt file, a prompt outside its frames) fails alone;
 * the others go on.
 */
public final class Engine implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Engine.class);
    static final String BLOCKING_DISPATCHER = "samstream-engine.blocking-dispatcher";
    static final String ENCODER_DISPATCHER = "samstream-engine.encoder-dispatcher";
    static final String DECODER_DISPATCHER = "samstream-engine.decoder-dispatcher";

    /**
     * The parts of the configuration the engine runs by.
     *
     * @param tracking  prompt tracking; off: every frame is decoded with its stream's prompts as they are
     * @param discovery automatic discovery of new objects (with tracking on); empty: none
     * @param limits    the control plane's bounds ({@code samstream.limits}) every stream and prompt is held to
     * @param fairShare memory mode: each GPU's model time shared fairly among its streams ({@link FairShare}); on
     *                  unless turned off to compare (tests, benchmarks)
     */
    public record Settings(EngineSettings.Batching batching, EngineSettings.Pipeline pipeline,
            EngineSettings.Reconnect reconnect, EngineSettings.Tracking tracking,
            Optional<Discovery> discovery, Limits limits, boolean fairShare) {
        /** With fair sharing (memory mode). */
        public Settings(EngineSettings.Batching batching, EngineSettings.Pipeline pipeline,
                EngineSettings.Reconnect reconnect, EngineSettings.Tracking tracking,
                Optional<Discovery> discovery, Limits limits) {
            this(batching, pipeline, reconnect, tracking, discovery, limits, true);
        }

        /** These settings with memory mode's fair sharing on or off. */
        public Settings withFairShare(boolean on) {
            return new Settings(batching, pipeline, reconnect, tracking, discovery, limits, on);
        }

        /** With the default limits. */
        public Settings(EngineSettings.Batching batching, EngineSettings.Pipeline pipeline,
                EngineSettings.Reconnect reconnect, EngineSettings.Tracking tracking,
                Optional<Discovery> discovery) {
            this(batching, pipeline, reconnect, tracking, discovery, Limits.DEFAULTS);
        }

        /** Without tracking: fixed prompts on every frame. */
        public Settings(EngineSettings.Batching batching, EngineSettings.Pipeline pipeline,
                EngineSettings.Reconnect reconnect) {
            this(batching, pipeline, reconnect, EngineSettings.Tracking.off(), Optional.empty());
        }
    }

    private final Settings settings;
    /** One per GPU: its backend, sources and the head of its pipeline. */
    private final List<Lane> lanes = new ArrayList<>();
    private final GpuPlacement placement;
    private final FrameSink sink;
    private final EngineMetrics metrics;
    private final ActorSystem system;
    /** The sinks' threads, one per group of streams. */
    private final SinkLanes sinkLanes;
    /** The frames' host work of a decoder wave (choosing masks, tracks), apart from the records' encoding. */
    private final ExecutorService waveHost;
    private final java.util.concurrent.atomic.AtomicInteger waveThreads = new java.util.concurrent.atomic.AtomicInteger();
    private final UniqueKillSwitch pipelineSwitch;
    private final CompletionStage<Done> pipelineDone;
    private final Map<String, StreamHandle> streams = new ConcurrentHashMap<>();
    /** Sees each published frame before it is released (previews); none until set. */
    private volatile FrameTap tap = FrameTap.NONE;
    private volatile boolean closed;
    private static final Duration SINK_TASK_WAIT = Duration.ofSeconds(30);

    /** One GPU's part: its backend, discovery and sources, its tracking, the head of its pipeline, its meters. */
    private record Lane(GpuLane gpu, Tracking tracking, FrameSourceFactory sources, Sink<Job, NotUsed> merge,
            EngineMetrics.Gpu meters, Optional<FairShare> share) {}

    /** On one backend (one GPU, or the CPU), with {@code settings}' discovery. */
    public Engine(Settings settings, Segmenter segmenter, FrameSourceFactory sources, FrameSink sink,
            EngineMetrics metrics) {
        this(settings, List.of(GpuLane.of(segmenter, settings.discovery())), sources, sink, metrics);
    }

    /**
     * On several GPUs, one pipeline head (micro-batching, encoder, decoder, records) each; {@code settings}'
     * discovery is not used (each GPU has its own).
     */
    public Engine(Settings settings, List<GpuLane> gpus, FrameSourceFactory sources, FrameSink sink,
            EngineMetrics metrics) {
        if (gpus.isEmpty()) {
            throw new IllegalArgumentException("the engine needs at least one backend");
        }
        if (gpus.stream().map(GpuLane::label).distinct().count() < gpus.size()) {
            throw new IllegalArgumentException("one backend per GPU, got "
                    + gpus.stream().map(GpuLane::label).toList());
        }
        this.settings = settings;
        this.sink = sink;
        this.metrics = metrics;
        this.system = ActorSystem.create("samstream", akkaConfig(settings.pipeline().inFlight(), gpus.size()));
        this.sinkLanes = new SinkLanes(settings.pipeline().sinkThreads());
        this.waveHost = Executors.newFixedThreadPool(Runtime.getRuntime().availableProcessors(), r -> {
            Thread t = new Thread(r, "samstream-wave-" + waveThreads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        int inFlight = settings.pipeline().inFlight();

        // The tail every GPU's records go to: the sinks, at most pending-acks unacknowledged in all.
        Pair<Pair<Sink<Job.Outcome, NotUsed>, UniqueKillSwitch>, CompletionStage<Done>> tail = MergeHub
                .of(Job.Outcome.class, 1)
                .via(Stages.publisher(sink, settings.pipeline().pendingAcks(), sinkLanes, metrics))
                .viaMat(KillSwitches.single(), Keep.both())
                .toMat(Sink.foreach(o -> {
                    if (!tapped(o)) {
                        o.job().frame().release(); // a GPU frame's memory back to its decoder
                    }
                    o.job().stream().frameDone(o.record() != null, o.job().frame().index(), o.job().frame().ptsMillis());
                }), Keep.both())
                .run(system);
        this.pipelineSwitch = tail.first().second();
        this.pipelineDone = tail.second();
        for (GpuLane gpu : gpus) {
            lanes.add(startLane(gpu, sources, tail.first().first(), metrics.gpu(gpu.label()), inFlight));
        }
        this.placement = new GpuPlacement(lanes.size(), this::framesInFlight);
        pipelineDone.whenComplete((d, e) -> {
            if (e != null && !closed) {
                log.error("the pipeline failed: {}", Errors.describe(e), e);
            }
            // Nothing flows any more: end every stream now rather than leave its waiters hanging.
            Throwable cause = e != null ? e : new IllegalStateException("the engine's pipeline stopped");
            streams.values().forEach(h -> h.abandon(cause));
        });
        log.info("engine started on {}: batches of up to {} frames or {} ms, {} in flight{}, {} unacknowledged records"
                + " at most", lanes.size() == 1 ? describe(lanes.get(0).gpu()) : lanes.size() + " GPUs ("
                        + String.join(", ", lanes.stream().map(l -> describe(l.gpu())).toList()) + ")",
                settings.batching().maxBatch(), settings.batching().maxLatency().toMillis(), inFlight,
                lanes.size() == 1 ? "" : " per GPU", settings.pipeline().pendingAcks());
    }

    private static String describe(GpuLane gpu) {
        return gpu.gpu() < 0 ? "the CPU" : "GPU " + gpu.gpu();
    }

    /**
     * One GPU's pipeline head: its merge, micro-batching, encoder, decoder and records, into the shared tail.
     * Batches are made of this GPU's streams' frames only; the batcher sends at once when nothing is in flight
     * on this GPU. Each GPU has an encoder and a decoder thread pool of its own, so GPUs never wait for each
     * other. A failure of the head (never a stream's: those fail alone) stops the whole pipeline.
     */
    private Lane startLane(GpuLane gpu, FrameSourceFactory sources, Sink<Job.Outcome, NotUsed> tail,
            EngineMetrics.Gpu meters, int inFlight) {
        Segmenter segmenter = gpu.segmenter();
        Tracking tracking = gpu.tracking(settings.tracking());
        Executor encoderPool = system.dispatchers().lookup(ENCODER_DISPATCHER + "-" + lanes.size());
        Executor decoderPool = system.dispatchers().lookup(DECODER_DISPATCHER + "-" + lanes.size());
        // One frame buffered per producer: what waits in the hub only adds latency. The memory stage asks for a batch
        // only when its model is free, so there a batch leaves as soon as it is asked for.
        BooleanSupplier behindIdle = tracking instanceof MemoryTracking ? () -> true
                : () -> meters.batchesInFlight.get() == 0;
        Flow<Job, List<Job>, NotUsed> batches = Flow.<Job>create()
                .via(new DeadlineBatcher<Job>(settings.batching().maxBatch(), settings.batching().maxLatency(),
                        behindIdle));
        // SAM 2.1 (memory mode) and SAM 3 (concepts) have no separate encoder stage: each frame is one tracker step.
        Flow<Job, Job.Decoded, NotUsed> model = tracking instanceof MemoryTracking
                ? batches.via(MemoryStage.flow(encoderPool, waveHost, meters))
                : tracking instanceof ConceptTracking ? batches.via(ConceptStage.flow(encoderPool,
                        system.dispatchers().lookup(BLOCKING_DISPATCHER), meters))
                : batches.via(Stages.encoder(segmenter, inFlight, encoderPool, meters))
                        .via(Stages.decoder(segmenter, decoderPool, waveHost, meters));
        // Memory mode: frames resized to the model's input ahead of the model's stage, on the host pool.
        Flow<Job, Job, NotUsed> inputs = tracking instanceof MemoryTracking memory
                ? MemoryStage.inputs(memory.inputSide(), Runtime.getRuntime().availableProcessors(), waveHost,
                        meters)
                : Flow.create();
        Sink<Job, NotUsed> merge = MergeHub.of(Job.class, 1)
                .via(inputs)
                .via(model)
                .via(Stages.records(segmenter, Runtime.getRuntime().availableProcessors(), ForkJoinPool.commonPool()))
                .watchTermination((mat, done) -> {
                    done.whenComplete((d, e) -> {
                        if (e != null) {
                            pipelineSwitch.abort(e);
                        }
                    });
                    return mat;
                })
                .to(tail)
                .run(system);
        // Hardware-decoded frames stay in this GPU's memory, and CPU-decoded ones come as YUV planes, when its
        // backend reads them so.
        boolean gpuFrames = segmenter.readsDeviceFrames();
        // Memory mode: a stream's step costs what its objects cost, so the GPU's model time is shared fairly.
        Optional<FairShare> share = tracking instanceof MemoryTracking && settings.fairShare()
                ? Optional.of(new FairShare()) : Optional.empty();
        return new Lane(gpu, tracking, gpuFrames ? sources.withGpuFrames(gpu.gpu()) : sources, merge, meters, share);
    }

    /** Hands a published frame to the tap; true when the tap kept it (and releases it itself). */
    private boolean tapped(Job.Outcome o) {
        if (o.record() == null) {
            return false;
        }
        try {
            return tap.published(o.job().stream(), o.record(), o.job().frame());
        } catch (RuntimeException e) {
            log.warn("stream {}: frame tap: {}", o.job().stream().id(), Errors.describe(e));
            return false;
        }
    }

    /** Sets what sees each published frame before it is released ({@link FrameTap#NONE}: nothing). */
    public void setFrameTap(FrameTap frameTap) {
        this.tap = java.util.Objects.requireNonNull(frameTap, "frameTap");
    }

    /** The engine's actor system (the HTTP server runs on it); terminated when the engine closes. */
    public ActorSystem system() {
        return system;
    }

    /** The frames of GPU {@code lane}'s streams between their source and their end, now. */
    private long framesInFlight(int lane) {
        long n = 0;
        for (StreamHandle h : streams.values()) {
            if (h.gpuIndex() == lane) {
                n += h.inPipeline();
            }
        }
        return n;
    }

    /** Akka's settings: the sources' blocking dispatcher, and an encoder and a decoder dispatcher per GPU. */
    private static Config akkaConfig(int inFlight, int gpus) {
        StringBuilder perGpu = new StringBuilder();
        for (int g = 0; g < gpus; g++) {
            perGpu.append("  encoder-dispatcher-").append(g).append(" = ${samstream-engine.encoder-dispatcher}\n")
                    .append("  decoder-dispatcher-").append(g).append(" = ${samstream-engine.encoder-dispatcher}\n");
        }
        return ConfigFactory.parseString("""
                akka {
                  loggers = ["akka.event.slf4j.Slf4jLogger"]
                  logging-filter = "akka.event.slf4j.Slf4jLoggingFilter"
                  loglevel = INFO
                  stdout-loglevel = OFF
                  log-dead-letters = off
                  log-dead-letters-during-shutdown = off
                  coordinated-shutdown.run-by-jvm-shutdown-hook = off
                }
                samstream-engine {
                  # Sources block in FFmpeg: one thread each while they read (BlockingExecutorConfigurator:
                  # idle threads reused first, at most max-threads).
                  blocking-dispatcher {
                    type = Dispatcher
                    executor = "io.samstream.stream.engine.BlockingExecutorConfigurator"
                    max-threads = 256
                    throughput = 1
                  }
                  encoder-dispatcher {
                    type = Dispatcher
                    executor = thread-pool-executor
                    thread-pool-executor { fixed-pool-size = %d }
                    throughput = 1
                  }
                %s}
                """.formatted(inFlight, perGpu)).withFallback(ConfigFactory.load()).resolve();
    }

    /**
     * Starts a stream. A running stream of the same id is removed first (its decoded frames are still
     * published) and the new one goes on with its frame numbers.
     */
    public synchronized StreamHandle add(StreamSpec spec) {
        return add(spec, StreamStart.FRESH);
    }

    /** As {@link #add(StreamSpec)}, from where {@code start} says (failover: frame numbers, tracks). */
    public synchronized StreamHandle add(StreamSpec spec, StreamStart start) {
        if (closed) {
            throw new IllegalStateException("the engine is closed");
        }
        String tooBig = settings.limits().check(spec);
        if (tooBig != null) {
            throw new IllegalArgumentException(tooBig);
        }
        // Every lane runs the one model: its kind of prompts, checked before a running stream of the id is replaced.
        String misfit = ModelPrompts.misfit(spec, lanes.get(0).tracking().findsConcepts());
        if (misfit != null) {
            throw new IllegalArgumentException(misfit);
        }
        if (pipelineDone.toCompletableFuture().isDone()) {
            throw new IllegalStateException("cannot add stream " + spec.id()
                    + ": the engine's pipeline has stopped (see the error logged when it did)");
        }
        AtomicLong nextIndex = new AtomicLong(start.firstFrame());
        StreamHandle old = streams.get(spec.id());
        if (old != null) {
            old.remove();
            // Shared, not copied: the old source may still be numbering frames.
            nextIndex = old.indexCounter();
            log.info("stream {}: redefined, restarting it", spec.id());
        }
        AtomicReference<StreamHandle> self = new AtomicReference<>();
        // Its GPU: where a run of it is already (a redefinition), else the least loaded; then it stays there.
        int gpu = place(spec.id());
        Lane lane = lanes.get(gpu);
        StreamTracker tracker;
        try {
            // A fresh tracker per run: a redefined stream starts with fresh tracks, and no stream sees another's.
            tracker = lane.tracking().open(spec, metrics.tracking(spec.id()));
            start.tracking().ifPresent(tracker::takeUp);
            tracker.keepStateEvery(start.stateEvery());
        } catch (RuntimeException | Error e) {
            release(spec.id(), gpu);
            throw e;
        }
        StreamHandle handle = new StreamHandle(spec, nextIndex, metrics, tracker, gpu, lane.meters(), settings.limits(),
                () -> {
            // The sink's per-stream state (files) is keyed by id: a redefined stream's old run ending must
            // not end the new run's. The registered handle is removed only after this ran.
            if (streams.get(spec.id()) == self.get()) {
                sinkLanes.runOn(spec.id(), () -> sink.streamEnded(spec.id()), SINK_TASK_WAIT);
            }
        });
        self.set(handle);
        handle.start(start);
        handle.result().whenComplete((r, e) -> {
            streams.remove(spec.id(), handle);
            release(spec.id(), gpu);
            if (!streams.containsKey(spec.id())) {
                metrics.activeTracks(spec.id()).set(0);
            }
            log.info("stream {}: {} ({} frames decoded, {} dropped, {} published)", r.streamId(),
                    r.state().name().toLowerCase(java.util.Locale.ROOT), r.decoded(), r.dropped(), r.published());
            try {
                // Kalman mode: its camera-motion copy of the last embedding; memory mode: its objects' memory banks
                // (on the GPU: device memory).
                handle.tracker().close();
            } catch (RuntimeException ex) {
                log.warn("stream {}: freeing its tracker's buffers failed: {}", spec.id(), ex.toString());
            }
        });
        Source<io.samstream.connectors.video.VideoFrame, NotUsed> frames = StreamSource.of(spec, handle,
                lane.sources(), settings.reconnect(), metrics.restarts(spec.id()), metrics.decodeErrors(spec.id()),
                BLOCKING_DISPATCHER);
        if (lane.share().isPresent()) {
            // After the live policy: a held-back live stream drops its own old frames, a file waits.
            FairShare.Member member = lane.share().get().join(spec.id());
            handle.setShare(member);
            frames = frames.via(Flow.fromGraph(new FairGate<>(member)));
        }
        Source<Job, UniqueKillSwitch> source = frames
                .viaMat(KillSwitches.single(), Keep.right())
                .map(f -> {
                    handle.emitted();
                    lane.meters().framesWaiting.incrementAndGet();
                    return new Job(handle, f);
                })
                .watchTermination((ks, done) -> {
                    done.whenComplete((d, e) -> handle.sourceEnded(e));
                    return ks;
                })
                // The stream's failure is its own: the hub and the other streams go on.
                .recoverWithRetries(1, Throwable.class, Source::empty);
        streams.put(spec.id(), handle);
        handle.setKillSwitch(source.to(lane.merge()).run(system));
        log.info("stream {}: started ({}, {}{})", spec.id(), LogSafe.of(spec.location()),
                spec.isLive() ? "live" : "file",
                lanes.size() == 1 ? "" : ", on GPU " + lane.gpu().label());
        return handle;
    }

    /** Places a new run of stream {@code id} ({@link GpuPlacement}); its GPU's streams gauge follows. */
    private int place(String id) {
        synchronized (placement) {
            int gpu = placement.place(id);
            lanes.get(gpu).meters().streams.set(placement.streams(gpu));
            return gpu;
        }
    }

    private void release(String id, int gpu) {
        synchronized (placement) {
            placement.release(id);
            lanes.get(gpu).meters().streams.set(placement.streams(gpu));
        }
    }

    /** Stops a stream's source; what it decoded is still published. False when no such stream runs. */
    public synchronized boolean remove(String id) {
        StreamHandle h = streams.get(id);
        if (h == null) {
            return false;
        }
        log.info("stream {}: removing", id);
        h.remove();
        return true;
    }

    /**
     * Applies one message of the prompts topic to its stream (only to that stream).
     *
     * @return the frame it applies from
     * @throws PromptRejected when no such stream runs, or the stream refuses the change
     */
    public long applyPrompt(PromptMessage m) throws PromptRejected {
        StreamHandle h = streams.get(m.stream());
        if (h == null) {
            throw new PromptRejected(PromptRejected.UNKNOWN_STREAM, "no stream '" + LogSafe.of(m.stream()) + "' runs here");
        }
        return h.applyPrompt(m);
    }

    /** The running streams. */
    public List<StreamHandle> streams() {
        return new ArrayList<>(streams.values());
    }

    public Optional<StreamHandle> stream(String id) {
        return Optional.ofNullable(streams.get(id));
    }

    public EngineMetrics metrics() {
        return metrics;
    }

    /** The control plane's bounds ({@code samstream.limits}) this engine holds streams and prompts to. */
    public Limits limits() {
        return settings.limits();
    }

    /** Completes when the pipeline itself stopped (it only does on close, or on an engine-wide failure). */
    public CompletionStage<Done> pipelineDone() {
        return pipelineDone;
    }

    /**
     * Stops every source and closes within {@code timeout} in all: up to 70 % of it for what was decoded to be
     * published, then the pipeline (up to 80 %), then the actor system (the rest). A model step still running
     * past it is left to finish on its own; what it decodes is not published.
     *
     * @return true when everything stopped in time: no model step may still be running
     */
    public boolean close(Duration timeout) {
        List<StreamHandle> running;
        synchronized (this) {
            if (closed) {
                return true;
            }
            closed = true;
            running = streams();
        }
        ShutdownBudget budget = ShutdownBudget.of(timeout);
        running.forEach(StreamHandle::remove);
        boolean clean = true;
        try {
            CompletableFuture.allOf(running.stream().map(h -> h.result().toCompletableFuture())
                    .toArray(CompletableFuture[]::new)).get(budget.until(0.7).toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            log.warn("closing: streams still publishing after {} ms, stopping anyway", budget.elapsed().toMillis());
            clean = false;
        }
        pipelineSwitch.shutdown();
        try {
            pipelineDone.toCompletableFuture().get(budget.until(0.8).toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            // A step still running holds the pipeline: abort it, its frames are not published.
            pipelineSwitch.abort(new IllegalStateException("the engine closed"));
            clean = false;
        }
        sinkLanes.close(budget.until(0.9));
        waveHost.shutdown();
        try {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(budget.left().toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            log.warn("closing: the actor system did not stop in time");
            clean = false;
        }
        return clean;
    }

    @Override
    public void close() {
        close(Duration.ofSeconds(30));
    }
}
