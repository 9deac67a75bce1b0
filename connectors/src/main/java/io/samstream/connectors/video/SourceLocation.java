package io.samstream.connectors.video;

import java.net.URI;
import java.nio.file.Path;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A parsed source location: what kind of source it is and what to hand FFmpeg. The syntax is
 * documented on {@link FrameSources}.
 *
 * @param kind        file, network stream, camera or test pattern
 * @param text        the location as given
 * @param ffmpegUrl   what avformat_open_input gets (null for test patterns)
 * @param inputFormat the FFmpeg input format to force (video4linux2 for cameras), or null to probe
 * @param scheme      the URL scheme in lower case for network streams ("rtsp", "https", ...), else null
 */
record SourceLocation(Kind kind, String text, String ffmpegUrl, String inputFormat, String scheme) {
    enum Kind { FILE, NETWORK, CAMERA, TEST_PATTERN }

    static final String TEST_PATTERN_PREFIX = "testpattern:";
    private static final Pattern URL_SCHEME = Pattern.compile("^([a-zA-Z][a-zA-Z0-9+.-]*)://");
    private static final Pattern V4L2_DEVICE = Pattern.compile("^/dev/(video\\d+|v4l/.+)$");

    static SourceLocation parse(String location) {
        String text = location.trim();
        String lower = text.toLowerCase(Locale.ROOT);
        if (lower.startsWith(TEST_PATTERN_PREFIX)) {
            return new SourceLocation(Kind.TEST_PATTERN, text, null, null, null);
        }
        if (lower.startsWith("v4l2:")) {
            return camera(text, text.substring("v4l2:".length()));
        }
        if (V4L2_DEVICE.matcher(text).matches()) {
            return camera(text, text);
        }
        Matcher scheme = URL_SCHEME.matcher(text);
        if (scheme.find()) {
            String name = scheme.group(1).toLowerCase(Locale.ROOT);
            if (name.equals("file")) {
                return file(text, Path.of(URI.create(text)).toString());
            }
            return new SourceLocation(Kind.NETWORK, text, text, null, name);
        }
        if (lower.startsWith("file:")) {
            return file(text, text.substring("file:".length()));
        }
        return file(text, text);
    }

    /** The location fit for logs: its credentials masked ({@link io.samstream.config.Credentials#mask}). */
    String redacted() {
        return io.samstream.config.Credentials.mask(text);
    }

    boolean isLive() {
        return kind == Kind.NETWORK || kind == Kind.CAMERA;
    }

    private static SourceLocation camera(String text, String device) {
        return new SourceLocation(Kind.CAMERA, text, device, "video4linux2", null);
    }

    private static SourceLocation file(String text, String path) {
        // "file:" keeps FFmpeg from reading a colon in the name as a protocol ("clip:1.mp4").
        return new SourceLocation(Kind.FILE, text, "file:" + Path.of(path).toAbsolutePath(), null, null);
    }
}
