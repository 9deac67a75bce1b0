package io.samstream.connectors.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.samstream.connectors.video.SourceLocation.Kind;

class SourceLocationTest {
    @Test
    void filesAreHandedToFfmpegAsAbsoluteFileUrls() {
        SourceLocation plain = SourceLocation.parse("clips/a:b.mp4");
        assertEquals(Kind.FILE, plain.kind());
        assertEquals("file:" + Path.of("clips/a:b.mp4").toAbsolutePath(), plain.ffmpegUrl());
        assertFalse(plain.isLive());
        assertEquals("file:/data/x.ts", SourceLocation.parse("file:/data/x.ts").ffmpegUrl());
        assertEquals("file:/data/my clip.mp4", SourceLocation.parse("file:///data/my%20clip.mp4").ffmpegUrl());
    }

    @Test
    void urlsAreLiveNetworkStreams() {
        for (String url : new String[] {"rtsp://cam/live", "rtmp://host/app/key", "https://cdn/x/index.m3u8",
            "http://127.0.0.1:8080/a.mp4", "srt://host:9000", "udp://239.0.0.1:1234"}) {
            SourceLocation location = SourceLocation.parse(url);
            assertEquals(Kind.NETWORK, location.kind(), url);
            assertEquals(url, location.ffmpegUrl());
            assertTrue(location.isLive());
            assertNull(location.inputFormat());
        }
        assertEquals("rtsps", SourceLocation.parse("RTSPS://cam/live").scheme());
    }

    @Test
    void devicesAreV4l2Cameras() {
        for (String device : new String[] {"/dev/video0", "/dev/video12", "/dev/v4l/by-id/usb-cam-video-index0"}) {
            SourceLocation location = SourceLocation.parse(device);
            assertEquals(Kind.CAMERA, location.kind(), device);
            assertEquals(device, location.ffmpegUrl());
            assertEquals("video4linux2", location.inputFormat());
            assertTrue(location.isLive());
        }
        assertEquals("/dev/video2", SourceLocation.parse("v4l2:/dev/video2").ffmpegUrl());
        assertEquals(Kind.FILE, SourceLocation.parse("/dev/videos.mp4").kind());
    }

    @Test
    void testPatternsAreNotForFfmpeg() {
        assertEquals(Kind.TEST_PATTERN, SourceLocation.parse("testpattern:64x48@10").kind());
        assertEquals(Kind.TEST_PATTERN, SourceLocation.parse(" TestPattern:64x48@10 ").kind());
    }

    @Test
    void passwordsStayOutOfLogs() {
        assertEquals("rtsp://admin:***@10.0.0.5:554/stream1",
                SourceLocation.parse("rtsp://admin:hunter2@10.0.0.5:554/stream1").redacted());
        assertEquals("rtsp://***@cam/s", SourceLocation.parse("rtsp://admin@cam/s").redacted());
        assertEquals("/data/a:b@c.mp4", SourceLocation.parse("/data/a:b@c.mp4").redacted());
    }

    @Test
    void optionsSplitIntoOursDecodersAndFfmpegs() {
        SourceOptions options = SourceOptions.split("s", Map.of("format", "mpegts", "live", "false",
                "open_timeout_ms", "5000", "read_timeout_ms", "2500", "decoder.gpu", "1", "rtsp_transport", "udp"));
        assertEquals("mpegts", options.format());
        assertEquals(false, options.live().orElseThrow());
        assertEquals(Duration.ofSeconds(5), options.openTimeout());
        assertEquals(Duration.ofMillis(2500), options.readTimeout());
        assertEquals(Map.of("gpu", "1"), options.decoder());
        assertEquals(Map.of("rtsp_transport", "udp"), options.input());

        SourceOptions defaults = SourceOptions.split("s", Map.of());
        assertTrue(defaults.live().isEmpty());
        assertEquals(FfmpegFrameSource.DEFAULT_OPEN_TIMEOUT, defaults.openTimeout());

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SourceOptions.split("cam-2", Map.of("read_timeout_ms", "soon")));
        assertEquals("cam-2: option read_timeout_ms must be a positive whole number, got \"soon\"", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SourceOptions.split("s", Map.of("live", "maybe")));
    }

    @Test
    void decoderPreferenceParsesAnyCase() {
        assertEquals(DecoderPreference.NVDEC, DecoderPreference.parse(" NVDEC "));
        assertEquals("auto", DecoderPreference.AUTO.toString());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DecoderPreference.parse("gpu"));
        assertEquals("decoder must be auto, nvdec or cpu, got \"gpu\"", e.getMessage());
    }

    @Test
    void specNeedsAnIdAndALocation() {
        assertThrows(IllegalArgumentException.class, () -> SourceSpec.of(" ", "/a.mp4"));
        assertThrows(IllegalArgumentException.class, () -> SourceSpec.of("s", ""));
        SourceSpec spec = SourceSpec.of("s", "/a.mp4").withOption("k", "v").withDecoder(DecoderPreference.CPU);
        assertEquals(Map.of("k", "v"), spec.options());
        assertEquals(DecoderPreference.CPU, spec.decoder());
    }
}
