package io.samstream.stream.app;

import io.samstream.config.SamstreamConfig;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.video.DecoderPreference;
import io.samstream.connectors.video.FrameSource;
import io.samstream.connectors.video.FrameSources;
import io.samstream.connectors.video.SourceSpec;
import io.samstream.stream.engine.FileSinks;
import io.samstream.stream.engine.FrameSink;
import io.samstream.stream.engine.FrameSourceFactory;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/** The video side of the connectors: sources for stream specs, and the per-stream file sinks. */
public final class VideoConnectors {
    private VideoConnectors() {}

    /**
     * Opens files, network streams, cameras and test patterns ({@link FrameSources#open}); its
     * {@link FrameSourceFactory#withGpuFrames} keeps NVDEC's frames in GPU memory.
     */
    public static FrameSourceFactory sources() {
        return new Sources(false, 0);
    }

    /** @param gpu with {@code gpuFrames}, the GPU NVDEC decodes on and leaves its frames on ({@code decoder.gpu}) */
    private record Sources(boolean gpuFrames, int gpu) implements FrameSourceFactory {
        @Override
        public FrameSource open(StreamSpec spec) throws IOException {
            return FrameSources.open(sourceSpec(spec, gpuFrames, gpu));
        }

        @Override
        public FrameSourceFactory withGpuFrames() {
            return withGpuFrames(0);
        }

        @Override
        public FrameSourceFactory withGpuFrames(int gpu) {
            return new Sources(true, gpu);
        }
    }

    /** As {@link #sourceSpec(StreamSpec)}; with {@code gpuFrames}, NVDEC on GPU {@code gpu}, its frames left there. */
    static SourceSpec sourceSpec(StreamSpec spec, boolean gpuFrames, int gpu) {
        SourceSpec s = sourceSpec(spec);
        return gpuFrames ? s.withOption("decoder.gpu", Integer.toString(gpu)).withGpuFrames(true) : s;
    }

    /** The connectors' spec of a stream: its decoder preference, and its liveness when forced. */
    static SourceSpec sourceSpec(StreamSpec spec) {
        DecoderPreference decoder = switch (spec.decoder()) {
            case AUTO -> DecoderPreference.AUTO;
            case NVDEC -> DecoderPreference.NVDEC;
            case CPU -> DecoderPreference.CPU;
        };
        SourceSpec s = new SourceSpec(spec.id(), spec.location(), decoder, Map.of());
        // The engine's policy follows StreamSpec.isLive(); the source reads the same way.
        return switch (spec.live()) {
            case AUTO -> s;
            case TRUE -> s.withOption("live", "true");
            case FALSE -> s.withOption("live", "false");
        };
    }

    /** One stream's masks.jsonl and overlay.mp4 at the given paths (the demo's layout). */
    public static Optional<FrameSink> fileSinks(Path jsonl, Path overlay) {
        return Optional.of(new FileSinks(id -> Optional.of(jsonl), id -> Optional.of(overlay)));
    }

    /** {@code DIR/<stream>/masks.jsonl} and {@code DIR/<stream>/overlay.mp4} under the configured folders. */
    public static Optional<FrameSink> fileSinks(SamstreamConfig config) {
        if (config.sinks().jsonlDir().isEmpty() && config.sinks().overlayDir().isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(FileSinks.underFolders(config.sinks().jsonlDir(), config.sinks().overlayDir()));
    }
}
