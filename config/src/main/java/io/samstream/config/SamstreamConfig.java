package io.samstream.config;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The validated configuration of an engine instance, read from {@code reference.conf} plus overrides.
 *
 * @param checkpoint     the SAM checkpoint to load; empty means the bundled example model
 * @param device         where the model runs
 * @param cpuThreads     threads of the CPU backend (already resolved: never 0)
 * @param kafka          where masks are published and prompts read ({@code samstream.kafka})
 * @param streams        the streams of the configuration file ({@code samstream.streams})
 * @param streamDefaults what stream definitions leave out ({@code samstream.stream-defaults})
 * @param batching       micro-batching ({@code samstream.batching})
 * @param pipeline       in-flight limits ({@code samstream.pipeline})
 * @param reconnect      backoff of live sources ({@code samstream.reconnect})
 * @param sinks          where mask records go ({@code samstream.sinks})
 * @param metrics        whether the HTTP server serves Prometheus metrics at /metrics ({@code samstream.metrics})
 * @param streamsTopic   the compacted topic of stream definitions; empty when off
 * @param tracking       objects followed from frame to frame ({@code samstream.tracking})
 * @param discovery      automatic discovery of new objects on key frames ({@code samstream.discovery})
 * @param sparsity       weight sparsity of the image encoder ({@code samstream.model.sparsity})
 * @param cluster        engines sharded by a consumer group ({@code samstream.cluster})
 * @param gpus           which GPUs the CUDA backend runs on ({@code samstream.gpus}; ignored on the CPU)
 * @param cuda           how the CUDA backend runs its kernels ({@code samstream.cuda})
 * @param limits         the control plane's bounds ({@code samstream.limits}), which {@code streams} fit
 * @param http           the HTTP server: API, previews, console, health, /metrics ({@code samstream.http})
 * @param shutdownTimeout the whole shutdown's budget ({@code samstream.shutdown-timeout}): SIGTERM to exit
 */
public record SamstreamConfig(Optional<Path> checkpoint, Device device, int cpuThreads, KafkaSettings kafka,
        List<StreamSpec> streams, StreamDefaults streamDefaults, EngineSettings.Batching batching, EngineSettings.Pipeline pipeline,
        EngineSettings.Reconnect reconnect, EngineSettings.Sinks sinks, EngineSettings.Metrics metrics,
        Optional<String> streamsTopic, EngineSettings.Tracking tracking, EngineSettings.Discovery discovery,
        ModelSparsity sparsity, ClusterSettings cluster, GpuSelection gpus, CudaSettings cuda, Limits limits,
        HttpSettings http, java.time.Duration shutdownTimeout) {
    /** {@code samstream.shutdown-timeout}'s default. */
    public static final java.time.Duration DEFAULT_SHUTDOWN_TIMEOUT = java.time.Duration.ofSeconds(15);
    /** The bounds of {@code samstream.shutdown-timeout}. */
    public static final java.time.Duration MIN_SHUTDOWN_TIMEOUT = java.time.Duration.ofSeconds(1);
    public static final java.time.Duration MAX_SHUTDOWN_TIMEOUT = java.time.Duration.ofMinutes(10);

    public SamstreamConfig {
        java.util.Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
        if (shutdownTimeout.compareTo(MIN_SHUTDOWN_TIMEOUT) < 0 || shutdownTimeout.compareTo(MAX_SHUTDOWN_TIMEOUT) > 0) {
            throw new IllegalArgumentException("samstream.shutdown-timeout must be 1 s to 10 min, got "
                    + shutdownTimeout.toMillis() + " ms");
        }
        java.util.Objects.requireNonNull(cluster, "cluster");
        java.util.Objects.requireNonNull(limits, "limits");
        java.util.Objects.requireNonNull(http, "http");
        java.util.Objects.requireNonNull(gpus, "gpus");
        java.util.Objects.requireNonNull(cuda, "cuda");
        streams = List.copyOf(streams);
        if (sparsity == null) {
            throw new IllegalArgumentException("sparsity must not be null (ModelSparsity.NONE for the dense model)");
        }
    }

    /** With the default shutdown timeout ({@link #DEFAULT_SHUTDOWN_TIMEOUT}). */
    public SamstreamConfig(Optional<Path> checkpoint, Device device, int cpuThreads, KafkaSettings kafka,
            List<StreamSpec> streams, StreamDefaults streamDefaults, EngineSettings.Batching batching,
            EngineSettings.Pipeline pipeline, EngineSettings.Reconnect reconnect, EngineSettings.Sinks sinks,
            EngineSettings.Metrics metrics, Optional<String> streamsTopic, EngineSettings.Tracking tracking,
            EngineSettings.Discovery discovery, ModelSparsity sparsity, ClusterSettings cluster, GpuSelection gpus,
            CudaSettings cuda, Limits limits, HttpSettings http) {
        this(checkpoint, device, cpuThreads, kafka, streams, streamDefaults, batching, pipeline, reconnect, sinks,
                metrics, streamsTopic, tracking, discovery, sparsity, cluster, gpus, cuda, limits, http,
                DEFAULT_SHUTDOWN_TIMEOUT);
    }

    /** With the default limits ({@link Limits#DEFAULTS}) and without an HTTP server ({@link HttpSettings#OFF}). */
    public SamstreamConfig(Optional<Path> checkpoint, Device device, int cpuThreads, KafkaSettings kafka,
            List<StreamSpec> streams, StreamDefaults streamDefaults, EngineSettings.Batching batching,
            EngineSettings.Pipeline pipeline, EngineSettings.Reconnect reconnect, EngineSettings.Sinks sinks,
            EngineSettings.Metrics metrics, Optional<String> streamsTopic, EngineSettings.Tracking tracking,
            EngineSettings.Discovery discovery, ModelSparsity sparsity, ClusterSettings cluster, GpuSelection gpus,
            CudaSettings cuda) {
        this(checkpoint, device, cpuThreads, kafka, streams, streamDefaults, batching, pipeline, reconnect, sinks,
                metrics, streamsTopic, tracking, discovery, sparsity, cluster, gpus, cuda, Limits.DEFAULTS,
                HttpSettings.OFF);
    }

    /** The same configuration with another HTTP section. */
    public SamstreamConfig withHttp(HttpSettings newHttp) {
        return new SamstreamConfig(checkpoint, device, cpuThreads, kafka, streams, streamDefaults, batching, pipeline,
                reconnect, sinks, metrics, streamsTopic, tracking, discovery, sparsity, cluster, gpus, cuda, limits,
                newHttp, shutdownTimeout);
    }

    /** On every GPU ({@link GpuSelection#ALL}), with the CUDA section's defaults ({@link CudaSettings#DEFAULTS}). */
    public SamstreamConfig(Optional<Path> checkpoint, Device device, int cpuThreads, KafkaSettings kafka,
            List<StreamSpec> streams, StreamDefaults streamDefaults, EngineSettings.Batching batching,
            EngineSettings.Pipeline pipeline, EngineSettings.Reconnect reconnect, EngineSettings.Sinks sinks,
            EngineSettings.Metrics metrics, Optional<String> streamsTopic, EngineSettings.Tracking tracking,
            EngineSettings.Discovery discovery, ModelSparsity sparsity, ClusterSettings cluster) {
        this(checkpoint, device, cpuThreads, kafka, streams, streamDefaults, batching, pipeline, reconnect, sinks,
                metrics, streamsTopic, tracking, discovery, sparsity, cluster, GpuSelection.ALL, CudaSettings.DEFAULTS);
    }

    /** Without a cluster ({@link ClusterSettings#OFF}). */
    public SamstreamConfig(Optional<Path> checkpoint, Device device, int cpuThreads, KafkaSettings kafka,
            List<StreamSpec> streams, StreamDefaults streamDefaults, EngineSettings.Batching batching,
            EngineSettings.Pipeline pipeline, EngineSettings.Reconnect reconnect, EngineSettings.Sinks sinks,
            EngineSettings.Metrics metrics, Optional<String> streamsTopic, EngineSettings.Tracking tracking,
            EngineSettings.Discovery discovery, ModelSparsity sparsity) {
        this(checkpoint, device, cpuThreads, kafka, streams, streamDefaults, batching, pipeline, reconnect, sinks,
                metrics, streamsTopic, tracking, discovery, sparsity, ClusterSettings.OFF);
    }

    /** The dense model ({@link ModelSparsity#NONE}). */
    public SamstreamConfig(Optional<Path> checkpoint, Device device, int cpuThreads, KafkaSettings kafka,
            List<StreamSpec> streams, StreamDefaults streamDefaults, EngineSettings.Batching batching,
            EngineSettings.Pipeline pipeline, EngineSettings.Reconnect reconnect, EngineSettings.Sinks sinks,
            EngineSettings.Metrics metrics, Optional<String> streamsTopic, EngineSettings.Tracking tracking,
            EngineSettings.Discovery discovery) {
        this(checkpoint, device, cpuThreads, kafka, streams, streamDefaults, batching, pipeline, reconnect, sinks,
                metrics, streamsTopic, tracking, discovery, ModelSparsity.NONE);
    }
}
