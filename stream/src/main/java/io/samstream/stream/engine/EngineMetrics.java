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
 * Engine-wide: batch sizes, encoder and decoder time, batches in flight, queue depths, capture-to-ack
 * latency, sink send errors. Per stream with tracking: objects lost / discovered, live tracks.
 */
public final class EngineMetrics {
    private final MeterRegistry registry;
    private final DistributionSummary batchSize;
    private final Timer encoderTime;
    private final Timer decoderTime;
    private final Timer latency;
    private final Counter sendErrors;
    private final Counter sendRejected;
    private final AtomicInteger batchesInFlight = new AtomicInteger();
    /** Live tracks per stream id (one gauge per id, shared by the runs of a redefined stream). */
    private final Map<String, AtomicInteger> activeTracks = new ConcurrentHashMap<>();
    /** Frames handed to the merge that are not yet in an encoder batch. */
    private final AtomicLong framesWaiting = new AtomicLong();
    /** Frames whose records went to the sinks and are not yet acknowledged. */
    private final AtomicLong pendingAcks = new AtomicLong();

    public EngineMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.batchSize = DistributionSummary.builder("samstream.batch.size").description("frames per encoder batch")
                .publishPercentileHistogram().serviceLevelObjectives(1, 2, 4, 8, 16, 32).register(registry);
        this.encoderTime = Timer.builder("samstream.encoder.time").description("image encoder time per batch")
                .publishPercentileHistogram().register(registry);
        this.decoderTime = Timer.builder("samstream.decoder.time")
                .description("prompt/mask decoding, post-processing and tracking time per wave").publishPercentileHistogram()
                .register(registry);
        this.latency = Timer.builder("samstream.latency.capture.to.ack")
                .description("from a frame's capture (or read) to its record's acknowledgement")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofMinutes(5)).register(registry);
        this.sendErrors = Counter.builder("samstream.sink.send.errors")
                .description("failed sends of mask records (retriable ones are retried)").register(registry);
        this.sendRejected = Counter.builder("samstream.sink.send.rejected")
                .description("sends of mask records that failed for good (not retriable): their stream fails")
                .register(registry);
        Gauge.builder("samstream.batches.in.flight", batchesInFlight, AtomicInteger::get)
                .description("batches being encoded or decoded").register(registry);
        Gauge.builder("samstream.queue.depth", framesWaiting, AtomicLong::get).tag("queue", "batching")
                .description("frames waiting in the pipeline's queues").register(registry);
        Gauge.builder("samstream.queue.depth", pendingAcks, AtomicLong::get).tag("queue", "pending-acks")
                .description("frames waiting in the pipeline's queues").register(registry);
    }

    /**
     * Where a frame's latency goes, by stage: {@code queue-wait} (from capture to its batch leaving for the
     * encoder, per frame), {@code decode} and {@code postprocess} (per wave: the mask decoder with the
     * choice among its outputs; the masks' upscaling and summaries), {@code ack} (per record: from the
     * hand-over to the sinks to their acknowledgement). The encoder's and the whole decoder stage's times
     * are {@code samstream.encoder.time} and {@code samstream.decoder.time}.
     */
    Timer stageTime(String stage) {
        return Timer.builder("samstream.stage.time").tag("stage", stage)
                .description("time per stage (queue-wait, decode, postprocess, ack)").publishPercentileHistogram()
                .register(registry);
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

    /** Prompt messages rejected so far for {@code reason}. */
    public double promptsRejectedCount(String reason) {
        return promptsRejected(reason).count();
    }

    /** Prompt messages accepted so far for {@code op}. */
    public double promptsAcceptedCount(String op) {
        return promptsAccepted(op).count();
    }

    DistributionSummary batchSize() {
        return batchSize;
    }

    Timer encoderTime() {
        return encoderTime;
    }

    Timer decoderTime() {
        return decoderTime;
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

    AtomicInteger batchesInFlight() {
        return batchesInFlight;
    }

    AtomicLong framesWaiting() {
        return framesWaiting;
    }

    AtomicLong pendingAcks() {
        return pendingAcks;
    }

    /** Frames waiting for an encoder batch now (a queue-depth gauge). */
    public long framesWaitingNow() {
        return framesWaiting.get();
    }

    /** Frames published and not yet acknowledged now (a queue-depth gauge). */
    public long pendingAcksNow() {
        return pendingAcks.get();
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
