package io.samstream.connectors.video;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A source's options map split into samstream's own keys, decoder options ("decoder." prefix) and
 * what goes to FFmpeg's avformat_open_input (protocol, demuxer and device options). The keys are
 * listed on {@link FrameSources}.
 */
record SourceOptions(String format, Optional<Boolean> live, Duration openTimeout, Duration readTimeout,
        Map<String, String> decoder, Map<String, String> input) {
    static final String FORMAT = "format";
    static final String LIVE = "live";
    static final String OPEN_TIMEOUT_MS = "open_timeout_ms";
    static final String READ_TIMEOUT_MS = "read_timeout_ms";
    static final String DECODER_PREFIX = "decoder.";

    static SourceOptions split(String streamId, Map<String, String> options) {
        String format = null;
        Optional<Boolean> live = Optional.empty();
        Duration openTimeout = FfmpegFrameSource.DEFAULT_OPEN_TIMEOUT;
        Duration readTimeout = FfmpegFrameSource.DEFAULT_READ_TIMEOUT;
        Map<String, String> decoder = new LinkedHashMap<>();
        Map<String, String> input = new LinkedHashMap<>();
        for (Map.Entry<String, String> option : options.entrySet()) {
            String key = option.getKey();
            String value = option.getValue();
            switch (key) {
                case FORMAT:
                    format = value;
                    break;
                case LIVE:
                    live = Optional.of(parseBoolean(streamId, key, value));
                    break;
                case OPEN_TIMEOUT_MS:
                    openTimeout = Duration.ofMillis(parsePositive(streamId, key, value));
                    break;
                case READ_TIMEOUT_MS:
                    readTimeout = Duration.ofMillis(parsePositive(streamId, key, value));
                    break;
                default:
                    if (key.startsWith(DECODER_PREFIX)) {
                        decoder.put(key.substring(DECODER_PREFIX.length()), value);
                    } else {
                        input.put(key, value);
                    }
            }
        }
        return new SourceOptions(format, live, openTimeout, readTimeout, Map.copyOf(decoder),
                java.util.Collections.unmodifiableMap(input));
    }

    static boolean parseBoolean(String streamId, String key, String value) {
        switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "true":
            case "yes":
            case "1":
                return true;
            case "false":
            case "no":
            case "0":
                return false;
            default:
                throw new IllegalArgumentException(streamId + ": option " + key + " must be true or false, got \"" + value
                        + "\"");
        }
    }

    static long parsePositive(String streamId, String key, String value) {
        try {
            long number = Long.parseLong(value.trim());
            if (number > 0) {
                return number;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(streamId + ": option " + key + " must be a positive whole number, got \""
                + value + "\"");
    }
}
