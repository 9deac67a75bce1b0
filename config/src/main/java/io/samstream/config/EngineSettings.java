package io.samstream.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/** The engine's own sections of the configuration (everything but the model and Kafka). */
public final class EngineSettings {
    private EngineSettings() {}

    /**
     * {@code samstream.batching}: a batch leaves at {@code maxBatch} frames or {@code maxLatency} after
     * its first frame, whichever comes first.
     */
    public record Batching(int maxBatch, Duration maxLatency) {}

    /**
     * {@code samstream.pipeline}.
     *
     * @param inFlight    batches being encoded/decoded at once (CUDA streams on the GPU)
     * @param pendingAcks frames published but not yet acknowledged by the sinks; past it, everything waits
     */
    public record Pipeline(int inFlight, int pendingAcks) {}

    /** {@code samstream.reconnect}: backoff between restarts of a live source. */
    public record Reconnect(Duration minBackoff, Duration maxBackoff, double randomFactor) {}

    /**
     * {@code samstream.sinks}.
     *
     * @param kafka      publish mask records to the masks topic
     * @param jsonlDir   when present, {@code DIR/<stream>/masks.jsonl}
     * @param overlayDir when present, {@code DIR/<stream>/overlay.mp4}
     */
    public record Sinks(boolean kafka, Optional<Path> jsonlDir, Optional<Path> overlayDir) {}

    /** {@code samstream.metrics}: the Prometheus scrape endpoint {@code http://host:port/metrics}. */
    public record Metrics(boolean enabled, String host, int port) {}
}
