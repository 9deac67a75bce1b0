package io.samstream.config;

import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One video stream the engine segments: from {@code samstream.streams} or, at run time, from the
 * stream-definitions topic (the same keys as JSON).
 *
 * @param id       the stream's name: Kafka record key, metric tag and output folder name
 * @param location a file path, a URL (rtsp, rtmp, http(s), hls, udp, srt), a V4L2 device
 *                 ({@code /dev/video0}) or a test pattern ({@code testpattern:640x480@25?frames=100})
 * @param live     whether frames arrive in real time (see {@link #isLive()})
 * @param decoder  which decoder to prefer
 * @param prompts  the configured prompts (seeds of the tracks; with tracking off, decoded on every frame)
 */
public record StreamSpec(String id, String location, Live live, Decoder decoder, PromptSpec prompts) {
    /** Stream ids become Kafka keys, metric tags and folder names: keep them plain. */
    public static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

    public StreamSpec {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(location, "location");
        Objects.requireNonNull(live, "live");
        Objects.requireNonNull(decoder, "decoder");
        Objects.requireNonNull(prompts, "prompts");
        if (!ID.matcher(id).matches()) {
            throw new IllegalArgumentException("stream id '" + id
                    + "' must be 1-128 of A-Z a-z 0-9 . _ - and start with a letter or digit");
        }
        if (location.isBlank()) {
            throw new IllegalArgumentException("stream " + id + ": location is empty");
        }
    }

    /**
     * True when frames arrive in real time: given, or for {@code auto} guessed from the location
     * (network URLs and cameras are live; files, and test patterns unless they say {@code live=true}, are not).
     */
    public boolean isLive() {
        return switch (live) {
            case TRUE -> true;
            case FALSE -> false;
            case AUTO -> guessLive(location);
        };
    }

    static boolean guessLive(String location) {
        String l = location.trim().toLowerCase(Locale.ROOT);
        if (l.startsWith("testpattern:")) {
            return l.matches(".*[?&]live=(true|yes|on|1)(&.*)?");
        }
        if (l.startsWith("file:")) {
            return false;
        }
        return l.contains("://") || l.startsWith("/dev/") || l.startsWith("v4l2:");
    }

    /** {@code samstream.streams[].live}. */
    public enum Live {
        AUTO, TRUE, FALSE;

        static Live parse(String value, String where) {
            return switch (value.trim().toLowerCase(Locale.ROOT)) {
                case "auto" -> AUTO;
                case "true", "yes", "on" -> TRUE;
                case "false", "no", "off" -> FALSE;
                default -> throw new ConfigException(where + ": '" + value + "' is not auto, true or false");
            };
        }
    }

    /** {@code samstream.streams[].decoder}. */
    public enum Decoder {
        /** NVDEC when a GPU and an NVDEC decoder for the codec are present, else the CPU; logged. */
        AUTO,
        /** NVDEC ({@code h264_cuvid}, {@code hevc_cuvid}, ...); falls back to the CPU with a warning. */
        NVDEC,
        /** FFmpeg's software decoders. */
        CPU;

        static Decoder parse(String value, String where) {
            try {
                return valueOf(value.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new ConfigException(where + ": unknown decoder '" + value + "' (expected auto, nvdec or cpu)");
            }
        }
    }
}
