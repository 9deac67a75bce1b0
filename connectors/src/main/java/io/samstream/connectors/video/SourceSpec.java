package io.samstream.connectors.video;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What to open for one stream: see {@link FrameSources} for the location syntax and the options.
 *
 * @param streamId the stream's id (Kafka key, log prefix); not blank
 * @param location a file path, a URL, a V4L2 device or a test pattern
 * @param decoder  the decoder preference (ignored by test patterns)
 * @param options  FFmpeg options for the input (protocol, demuxer, device), plus samstream's own
 *                 keys listed in {@link FrameSources}; copied, never null
 * @param gpuFrames frames for a GPU backend: NVDEC's kept in GPU memory, a CPU decoder's as YUV planes ({@link #withGpuFrames})
 */
public record SourceSpec(String streamId, String location, DecoderPreference decoder, Map<String, String> options,
        boolean gpuFrames) {
    /** Frames to host memory. */
    public SourceSpec(String streamId, String location, DecoderPreference decoder, Map<String, String> options) {
        this(streamId, location, decoder, options, false);
    }

    /**
     * With {@code on}, frames for a GPU backend: those NVDEC decodes stay in GPU memory ({@link DevicePicture},
     * FFmpeg's CUDA frames on the GPU's primary context, the one the engine's kernels use), and a CPU decoder's
     * 8-bit 4:2:0 frames come as their YUV planes ({@link HostYuvPicture}, uploaded as they are); other
     * pixel formats still come as RGB.
     */
    public SourceSpec withGpuFrames(boolean on) {
        return new SourceSpec(streamId, location, decoder, options, on);
    }

    public SourceSpec {
        if (streamId == null || streamId.isBlank()) {
            throw new IllegalArgumentException("a source needs a stream id");
        }
        if (location == null || location.isBlank()) {
            throw new IllegalArgumentException(streamId + ": a source needs a location");
        }
        Objects.requireNonNull(decoder, "decoder");
        options = options == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(options));
    }

    /** A spec with the AUTO decoder and no options. */
    public static SourceSpec of(String streamId, String location) {
        return new SourceSpec(streamId, location, DecoderPreference.AUTO, Map.of());
    }

    public SourceSpec withDecoder(DecoderPreference preference) {
        return new SourceSpec(streamId, location, preference, options, gpuFrames);
    }

    public SourceSpec withOption(String key, String value) {
        Map<String, String> more = new LinkedHashMap<>(options);
        more.put(key, value);
        return new SourceSpec(streamId, location, decoder, more, gpuFrames);
    }
}
