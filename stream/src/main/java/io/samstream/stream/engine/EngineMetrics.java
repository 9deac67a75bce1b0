package io.samstream.stream.engine;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.samstream.stream.track.TrackingMeters;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The engine's meters (Micrometer; Prometheus names in brackets). Per stream (tag {@code stream}):
 * frames decoded / dropped / published [samstream_frames_*_total], source restarts, failures.
 * Per GPU (tag {@code gpu}, {@link Gpu}): batch sizes, encoder and decoder time, batches in flight, queue depths,
 * stage times, streams placed. Engine-wide: capture-to-ack latency, sink send errors. Per stream with
 * tracking: objects lost / discovered, live tracks.
 */
public final class EngineMetrics {
    private final MeterRegistry registry;
    private final Timer latency;
    private final Counter sendErrors;
    private final Counter sendRejected;
    /** Live tracks per stream id (one gauge per id, shared by the runs of a redefined stream). */
    private final Map<String, AtomicInteger> activeTracks = new ConcurrentHashMap<>();
    /** The meters of each GPU (tag {@code gpu}: its ordinal, or "cpu" for the CPU backend). */
    private final Map<String, Gpu> gpus = new ConcurrentHashMap<>();

    /**
     * One GPU's meters, tag {@code gpu}: its ordinal ("0", "1", ...) or "cpu" for the CPU backend. Batch sizes,
     * encoder time per batch, decoder time per wave, batches in flight, the frames waiting for its batching
     * stage and its streams' records waiting for acknowledgement (queue depths), the stage times of its
     * frames, and the streams placed on it.
     */
    final class Gpu {
        private final String gpu;
        final DistributionSummary batchSize;
        final Timer encoderTime;
        final Timer decoderTime;
        final AtomicInteger batchesInFlight = new AtomicInteger();
        /** Frames handed to this GPU's merge that are not yet in an encoder batch. */
        final AtomicLong framesWaiting = new AtomicLong();
        /** Records of this GPU's streams that went to the sinks and are not yet acknowledged. */
        final AtomicLong pendingAcks = new AtomicLong();
        /** Streams placed on this GPU now. */
        final AtomicInteger streams = new AtomicInteger();

        private Gpu(String gpu) {
            this.gpu = gpu;
            this.batchSize = DistributionSummary.builder("samstream.batch.size").tag("gpu", gpu)
                    .description("frames per encoder batch").publishPercentileHistogram()
                    .serviceLevelObjectives(1, 2, 4, 8, 16, 32).register(registry);
            this.encoderTime = Timer.builder("samstream.encoder.time").tag("gpu", gpu)
                    .description("image encoder time per batch").publishPercentileHistogram().register(registry);
            this.decoderTime = Timer.builder("samstream.decoder.time").tag("gpu", gpu)
                    .description("prompt/mask decoding, post-processing and tracking time per wave")
                    .publishPercentileHistogram().register(registry);
            Gauge.builder("samstream.batches.in.flight", batchesInFlight, AtomicInteger::get).tag("gpu", gpu)
                    .description("batches being encoded or decoded").register(registry);
            Gauge.builder("samstream.queue.depth", framesWaiting, AtomicLong::get).tags("queue", "batching", "gpu", gpu)
                    .description("frames waiting in the pipeline's queues").register(registry);
            Gauge.builder("samstream.queue.depth", pendingAcks, AtomicLong::get).tags("queue", "pending-acks", "gpu", gpu)
                    .description("frames waiting in the pipeline's queues").register(registry);
            Gauge.builder("samstream.gpu.streams", streams, AtomicInteger::get).tag("gpu", gpu)
                    .description("streams placed on the GPU").register(registry);
        }

        String label() {
            return gpu;
        }

        /**
         * Where a frame's latency goes, by stage: {@code queue-wait} (from capture to its batch leaving for the
         * encoder, per frame), {@code decode} and {@code postprocess} (per wave: the mask decoder with the
         * choice among its outputs; the masks' upscaling and summaries), {@code ack} (per record: from the
         * hand-over to the sinks to their acknowledgement), {@code model-input} (memory mode, per frame: its resize
         * to the model's input, ahead of the model's stage). The encoder's and the whole decoder stage's times
         * are {@code samstream.encoder.time} and {@code samstream.decoder.time}.
         */
        Timer stageTime(String stage) {
            return Timer.builder("samstream.stage.time").tags("stage", stage, "gpu", gpu)
                    .description("time per stage (queue-wait, decode, postprocess, ack, model-input, mask-summary,"
                            + " finish-wait)")
                    .publishPercentileHistogram().register(registry);
        }
    }

    public EngineMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.latency = Timer.builder("samstream.latency.capture.to.ack")
                .description("from a frame's capture (or read) to its record's acknowledgement")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofMinutes(5)).register(registry);
        this.sendErrors = Counter.builder("samstream.sink.send.errors")
                .description("failed sends of mask records (retriable ones are retried)").register(registry);
        this.sendRejected = Counter.builder("samstream.sink.send.rejected")
                .description("sends of mask records that failed for good (not retriable): their stream fails")
                .register(registry);
    }

    /** The meters of GPU {@code label} (its ordinal, or "cpu"), registered on first use. */
    Gpu gpu(String label) {
        return gpus.computeIfAbsent(label, Gpu::new);
    }

    /** Metrics that go nowhere (tests, embedders without a registry). */
    public static EngineMetrics inMemory() {
        return new EngineMetrics(new SimpleMeterRegistry());
    }

    public MeterRegistry registry() {
        return registry;
    }

    Counter decoded(String stream) {
        return counter("samstream.frames.decoded", stream, "frames decoded by the stream's source");
    }

    Counter dropped(String stream) {
        return counter("samstream.frames.dropped", stream, "live frames dropped because the engine was behind");
    }

    Counter published(String stream) {
        return counter("samstream.frames.published", stream, "frames whose records every sink acknowledged");
    }

    Counter restarts(String stream) {
        return counter("samstream.source.restarts", stream, "restarts (reconnects) of a live source");
    }

    Counter decodeErrors(String stream) {
        return counter("samstream.decode.errors", stream,
                "packets of the stream's source that failed to decode (or decoded with errors concealed), skipped");
    }

    /** Decode errors of {@code stream} so far [samstream_decode_errors_total{stream}]. */
    public double decodeErrorsCount(String stream) {
        return decodeErrors(stream).count();
    }

    Counter failures(String stream) {
        return counter("samstream.stream.failures", stream, "streams that failed (a corrupt file, a bad prompt)");
    }

    private Counter counter(String name, String stream, String description) {
        return Counter.builder(name).tag("stream", stream).description(description).register(registry);
    }

    /**
     * A stream's tracking meters: objects lost [samstream_objects_lost_total{stream}], objects discovered
     * [samstream_objects_discovered_total{stream}], lost objects found again under their ids
     * [samstream_objects_reidentified_total{stream}], scene cuts [samstream_scene_cuts_total{stream}], live
     * tracks [samstream_tracks_active{stream}].
     */
    TrackingMeters tracking(String stream) {
        return new TrackingMeters(
                counter("samstream.objects.lost", stream, "tracked objects lost (reported once each)"),
                counter("samstream.objects.discovered", stream, "objects found by automatic discovery"),
                counter("samstream.objects.reidentified", stream, "lost objects found again under their old ids"),
                counter("samstream.scene.cuts", stream, "scene cuts (every followed object lost at once)"),
                activeTracks(stream));
    }

    /** The live tracks of a stream now (a gauge). */
    AtomicInteger activeTracks(String stream) {
        return activeTracks.computeIfAbsent(stream, s -> {
            AtomicInteger v = new AtomicInteger();
            Gauge.builder("samstream.tracks.active", v, AtomicInteger::get).tag("stream", s)
                    .description("objects being tracked").register(registry);
            return v;
        });
    }

    /** Objects lost so far in {@code stream}. */
    public double objectsLostCount(String stream) {
        return tracking(stream).lost().count();
    }

    /** Prompt messages applied [samstream_prompts_accepted_total{op}]. */
    Counter promptsAccepted(String op) {
        return Counter.builder("samstream.prompts.accepted").tag("op", op)
                .description("messages of the prompts topic applied").register(registry);
    }

    /** Prompt messages rejected [samstream_prompts_rejected_total{reason}]. */
    Counter promptsRejected(String reason) {
        return Counter.builder("samstream.prompts.rejected").tag("reason", reason)
                .description("messages of the prompts topic rejected (logged; dead-lettered when configured)")
                .register(registry);
    }

    /**
     * Control-plane records rejected [samstream_control_rejected_total{topic,reason}]: {@code topic} is
     * {@code prompts}, {@code streams} or {@code state}, {@code reason} a {@link ControlRejected} code.
     */
    Counter controlRejected(String topic, String reason) {
        return Counter.builder("samstream.control.rejected").tag("topic", topic).tag("reason", reason)
                .description("records of the streams, prompts and state topics rejected (logged once; dead-lettered"
                        + " when configured); their stream goes on")
                .register(registry);
    }

    /** Control-plane records of {@code topic} rejected so far for {@code reason}. */
    public double controlRejectedCount(String topic, String reason) {
        return controlRejected(topic, reason).count();
    }

    /** Prompt messages rejected so far for {@code reason}. */
    public double promptsRejectedCount(String reason) {
        return promptsRejected(reason).count();
    }

    /** Prompt messages accepted so far for {@code op}. */
    public double promptsAcceptedCount(String op) {
        return promptsAccepted(op).count();
    }

    Timer latency() {
        return latency;
    }

    Counter sendErrors() {
        return sendErrors;
    }

    Counter sendRejected() {
        return sendRejected;
    }

    /** Batches being encoded or decoded now, on every GPU. */
    public int batchesInFlightNow() {
        return gpus.values().stream().mapToInt(g -> g.batchesInFlight.get()).sum();
    }

    /** Frames waiting for an encoder batch now, on every GPU (the queue-depth gauges). */
    public long framesWaitingNow() {
        return gpus.values().stream().mapToLong(g -> g.framesWaiting.get()).sum();
    }

    /** Frames published and not yet acknowledged now, on every GPU (the queue-depth gauges). */
    public long pendingAcksNow() {
        return gpus.values().stream().mapToLong(g -> g.pendingAcks.get()).sum();
    }

    /** Sink sends that failed for good (not retried) so far. */
    public double sendRejectedCount() {
        return sendRejected.count();
    }

    /** Sink send errors so far. */
    public double sendErrorCount() {
        return sendErrors.count();
    }
}
