package io.samstream.stream.app;

import io.samstream.config.SamstreamConfig;
import io.samstream.stream.engine.FrameSink;
import io.samstream.stream.engine.FrameSourceFactory;
import java.util.Optional;

/** The video side of the connectors: sources for stream specs, and the per-stream file sinks. */
public final class VideoConnectors {
    private VideoConnectors() {}

    /** Opens files, network streams, cameras and test patterns. */
    public static FrameSourceFactory sources() {
        return spec -> {
            throw new java.io.IOException(spec.id() + ": this build has no video sources yet");
        };
    }

    /** One stream's masks.jsonl and overlay.mp4 at the given paths (the demo's layout). */
    public static Optional<FrameSink> fileSinks(java.nio.file.Path jsonl, java.nio.file.Path overlay) {
        return Optional.empty();
    }

    /** masks.jsonl / overlay.mp4 per stream under the configured folders, when any is set. */
    public static Optional<FrameSink> fileSinks(SamstreamConfig config) {
        return Optional.empty();
    }
}
