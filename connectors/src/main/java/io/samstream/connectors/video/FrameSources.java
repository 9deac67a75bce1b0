package io.samstream.connectors.video;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Opens the right {@link FrameSource} for a {@link SourceSpec}.
 *
 * <h2>Locations</h2>
 * <table>
 *   <tr><th>location</th><th>source</th><th>live</th></tr>
 *   <tr><td>{@code /data/clip.mp4}, {@code clip.mkv}, {@code file:/data/a:b.ts}, {@code file:///data/clip.mp4}</td>
 *       <td>a video file: any container and codec the bundled FFmpeg reads</td><td>no</td></tr>
 *   <tr><td>{@code rtsp://[user:pass@]host[:port]/path}, {@code rtsps://}, {@code rtmp://}, {@code rtmps://},
 *       {@code http://}, {@code https://} (also HLS {@code .m3u8}), {@code srt://}, {@code udp://}, {@code tcp://},
 *       any other {@code scheme://} FFmpeg knows</td>
 *       <td>a network stream</td><td>yes</td></tr>
 *   <tr><td>{@code /dev/video0}, {@code /dev/v4l/by-id/...}, {@code v4l2:/dev/video2}</td>
 *       <td>a V4L2 camera (FFmpeg format video4linux2)</td><td>yes</td></tr>
 *   <tr><td>{@code testpattern:WIDTHxHEIGHT@FPS[?frames=N&seed=S&live=true]}</td>
 *       <td>{@link TestPatternSource}: endless unless {@code frames} is given; seed 0 and not live by
 *       default</td><td>if asked</td></tr>
 * </table>
 * A URL to a recorded file on a web server is a network stream too (live: newest frames win, the
 * engine reconnects); add the option {@code live=false} to read it like a file, every frame.
 * Passwords in URLs are replaced by {@code ***} in logs and messages.
 *
 * <h2>Options</h2>
 * The spec's options go to FFmpeg's {@code avformat_open_input} (protocol, demuxer and device options,
 * the ones {@code ffmpeg -i} takes: {@code rtsp_transport=udp}, {@code video_size=1280x720},
 * {@code input_format=mjpeg}, {@code framerate=30}, {@code headers=...}, {@code fflags=nobuffer}),
 * except these:
 * <ul>
 *   <li>{@code decoder.NAME=VALUE}: a decoder option ({@code decoder.gpu=1} picks NVDEC's GPU,
 *       {@code decoder.threads=4});</li>
 *   <li>{@code format}: force an input format ({@code mpegts}, {@code video4linux2}) instead of probing;</li>
 *   <li>{@code live}: true or false, overrides what the location implies;</li>
 *   <li>{@code open_timeout_ms} (default 30000): the longest an open and probe may take;</li>
 *   <li>{@code read_timeout_ms} (default 15000): live sources only, the longest wait for a packet.</li>
 * </ul>
 * Network streams get {@code rw_timeout=10000000} (microseconds), RTSP {@code rtsp_transport=tcp} and
 * {@code timeout=10000000}, unless the options say otherwise. An option FFmpeg did not use is logged.
 *
 * <h2>Errors</h2>
 * A malformed location or option is an {@link IllegalArgumentException}; a source that cannot be
 * opened (missing, corrupt, unreachable, timed out) an {@link IOException} naming the stream, the
 * location and the reason.
 */
public final class FrameSources {
    private static final Pattern TEST_PATTERN =
            Pattern.compile("(?i)testpattern:(\\d+)x(\\d+)@(\\d+(?:\\.\\d+)?)(?:\\?(.*))?");

    private FrameSources() {
    }

    /**
     * A location fit to show (logs, command output, API answers): the password of a
     * {@code scheme://user:password@host} URL is replaced by {@code ***}; anything else is kept as given.
     */
    public static String redacted(String location) {
        return SourceLocation.redact(location);
    }

    public static FrameSource open(SourceSpec spec) throws IOException {
        SourceLocation location = SourceLocation.parse(spec.location());
        if (location.kind() == SourceLocation.Kind.TEST_PATTERN) {
            return testPattern(spec);
        }
        return FfmpegFrameSource.open(spec, location, VideoDecoder.NVIDIA_GPU_PRESENT);
    }

    /** Parses a {@code testpattern:} location; its query parameters win over the spec's options. */
    static TestPatternSource testPattern(SourceSpec spec) {
        Matcher matcher = TEST_PATTERN.matcher(spec.location().trim());
        if (!matcher.matches()) {
            throw new IllegalArgumentException(spec.streamId() + ": test pattern location must read"
                    + " testpattern:WIDTHxHEIGHT@FPS[?frames=N&seed=S&live=true|false&speed=F], got \"" + spec.location()
                    + "\"");
        }
        Map<String, String> parameters = new LinkedHashMap<>(spec.options());
        if (matcher.group(4) != null && !matcher.group(4).isEmpty()) {
            for (String pair : matcher.group(4).split("&")) {
                int equals = pair.indexOf('=');
                if (equals <= 0) {
                    throw new IllegalArgumentException(spec.streamId() + ": test pattern parameter \"" + pair
                            + "\" must read name=value");
                }
                parameters.put(pair.substring(0, equals).toLowerCase(Locale.ROOT), pair.substring(equals + 1));
            }
        }
        long frames = TestPatternSource.ENDLESS;
        long seed = 0;
        boolean live = false;
        double speed = 1;
        for (Map.Entry<String, String> parameter : parameters.entrySet()) {
            String value = parameter.getValue();
            switch (parameter.getKey()) {
                case "frames":
                    frames = SourceOptions.parsePositive(spec.streamId(), "frames", value);
                    break;
                case "seed":
                    try {
                        seed = Long.parseLong(value.trim());
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException(spec.streamId() + ": test pattern seed must be a whole number,"
                                + " got \"" + value + "\"");
                    }
                    break;
                case SourceOptions.LIVE:
                    live = SourceOptions.parseBoolean(spec.streamId(), "live", value);
                    break;
                case "speed":
                    try {
                        speed = Double.parseDouble(value.trim());
                    } catch (NumberFormatException e) {
                        speed = Double.NaN; // refused below, with the range
                    }
                    if (!(speed > 0 && speed <= 10)) {
                        throw new IllegalArgumentException(spec.streamId() + ": test pattern speed must be a number in"
                                + " (0, 10], got \"" + value + "\"");
                    }
                    break;
                default:
                    throw new IllegalArgumentException(spec.streamId() + ": test pattern knows frames, seed, live and"
                            + " speed, not \"" + parameter.getKey() + "\"");
            }
        }
        int width = parseSize(spec.streamId(), matcher.group(1));
        int height = parseSize(spec.streamId(), matcher.group(2));
        double fps = Double.parseDouble(matcher.group(3));
        return new TestPatternSource(spec.streamId(), width, height, fps, frames, seed, live, speed);
    }

    private static int parseSize(String streamId, String digits) {
        try {
            return Integer.parseInt(digits);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(streamId + ": test pattern size " + digits + " is too large");
        }
    }
}
