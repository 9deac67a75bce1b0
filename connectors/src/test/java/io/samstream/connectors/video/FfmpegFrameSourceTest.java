package io.samstream.connectors.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;

/**
 * FfmpegFrameSource against the real FFmpeg: videos written in the test, decoded from disk and over
 * HTTP; broken, missing and unreachable inputs; the decoder choice.
 */
class FfmpegFrameSourceTest {
    private static final int FRAMES = 12;

    @TempDir
    static Path dir;
    private static Path mp4;
    private static HttpServer http;

    private static Path ts;
    private static final CountDownLatch STALLS_END = new CountDownLatch(1);
    private static ExecutorService httpThreads;

    @BeforeAll
    static void writeVideos() throws IOException {
        mp4 = TestVideos.write(dir.resolve("colours.mp4"), FRAMES, null);
        ts = TestVideos.write(dir.resolve("long.ts"), 100, null);
        http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        http.createContext("/", FfmpegFrameSourceTest::serveFile);
        http.createContext("/stall/", FfmpegFrameSourceTest::serveHalfThenStall);
        httpThreads = Executors.newCachedThreadPool();
        http.setExecutor(httpThreads);
        http.start();
    }

    @AfterAll
    static void stopServer() {
        STALLS_END.countDown();
        http.stop(0);
        httpThreads.shutdownNow();
    }

    @Test
    void decodesEveryFrameOfAFileInOrderWithItsColour() throws IOException {
        try (FrameSource source = FrameSources.open(SourceSpec.of("cam-1", mp4.toString()).withDecoder(DecoderPreference.CPU))) {
            assertFalse(source.isLive());
            assertTrue(source.describe().startsWith("cam-1 " + mp4), source.describe());
            List<VideoFrame> frames = readAll(source);
            assertEquals(FRAMES, frames.size());
            long previousPts = Long.MIN_VALUE;
            for (int i = 0; i < FRAMES; i++) {
                VideoFrame frame = frames.get(i);
                assertEquals("cam-1", frame.streamId());
                assertEquals(i, frame.index());
                assertEquals(TestVideos.WIDTH, frame.width());
                assertEquals(TestVideos.HEIGHT, frame.height());
                assertTrue(frame.ptsMillis() > previousPts, "pts must increase: " + frame.ptsMillis());
                assertEquals(i * 100, frame.ptsMillis(), 1, "pts of frame " + i);
                assertNotNull(frame.capturedAt());
                previousPts = frame.ptsMillis();
                assertColour(TestVideos.COLOURS[i % 4], frame, 6);
            }
            assertNull(source.next(), "the end stays the end");
        }
    }

    @Test
    void decodesOtherContainersAndCodecs() throws IOException {
        Path avi = TestVideos.write(dir.resolve("colours.avi"), 5, "mpeg4");
        try (FfmpegFrameSource source = FfmpegFrameSource.open(SourceSpec.of("s", avi.toString()))) {
            assertEquals("mpeg4", source.decoderName());
            List<VideoFrame> frames = readAll(source);
            assertEquals(5, frames.size());
            for (VideoFrame frame : frames) {
                assertColour(TestVideos.COLOURS[(int) frame.index() % 4], frame, 8);
            }
        }
    }

    @Test
    void decodesTheSameFileOverHttpAsALiveStream() throws IOException {
        String url = "http://127.0.0.1:" + http.getAddress().getPort() + "/colours.mp4";
        try (FrameSource source = FrameSources.open(SourceSpec.of("web", url))) {
            assertTrue(source.isLive());
            List<VideoFrame> frames = readAll(source);
            assertEquals(FRAMES, frames.size());
            assertColour(TestVideos.COLOURS[2], frames.get(2), 6);
        }
    }

    @Test
    void garbageFailsNamingTheStreamTheFileAndTheReason() throws IOException {
        Path garbage = dir.resolve("garbage.mp4");
        byte[] bytes = new byte[20_000];
        new java.util.Random(7).nextBytes(bytes);
        Files.write(garbage, bytes);
        IOException e = assertThrows(IOException.class, () -> FrameSources.open(SourceSpec.of("bad-1", garbage.toString())));
        assertTrue(e.getMessage().startsWith("bad-1: cannot open " + garbage + ": "), e.getMessage());
        assertTrue(e.getMessage().length() > ("bad-1: cannot open " + garbage + ": ").length() + 5, e.getMessage());
    }

    @Test
    void fileCutInItsDataFailsWithFfmpegsReason() throws IOException {
        // A recording that stopped mid-way: the MP4 index (moov), written last, is missing.
        byte[] whole = Files.readAllBytes(mp4);
        int[] mdat = mp4Box(whole, "mdat");
        Path truncated = dir.resolve("cut-in-data.mp4");
        Files.write(truncated, Arrays.copyOf(whole, mdat[0] + mdat[1] / 2));
        IOException e = assertThrows(IOException.class, () -> FrameSources.open(SourceSpec.of("cut", truncated.toString())));
        assertTrue(e.getMessage().startsWith("cut: cannot open " + truncated + ": "), e.getMessage());
        // FFmpeg's log line says what is missing, and the message carries it.
        assertTrue(e.getMessage().contains("moov atom not found"), e.getMessage());
    }

    @Test
    void fileCutInItsIndexFailsNamingTheStream() throws IOException {
        byte[] whole = Files.readAllBytes(mp4);
        int[] moov = mp4Box(whole, "moov");
        Path truncated = dir.resolve("cut-in-index.mp4");
        Files.write(truncated, Arrays.copyOf(whole, moov[0] + moov[1] / 2));
        IOException e = assertThrows(IOException.class, () -> {
            try (FrameSource source = FrameSources.open(SourceSpec.of("cut-2", truncated.toString()))) {
                readAll(source);
            }
        });
        assertTrue(e.getMessage().startsWith("cut-2: "), e.getMessage());
        assertTrue(e.getMessage().contains(truncated.toString()), e.getMessage());
    }

    /** 30 frames of H.264 in an MP4 with its index first, so that a cut file still opens. */
    private static Path thirtyFrames(String name) throws IOException {
        return TestVideos.write(dir.resolve(name), 30, null, java.util.Map.of("movflags", "+faststart"));
    }

    @Test
    void intactFileEndsNormallyWithEveryFrameAndNoDecodeError() throws IOException {
        Path whole = thirtyFrames("whole-30.mp4");
        try (FfmpegFrameSource source = FfmpegFrameSource.open(SourceSpec.of("ok", whole.toString()))) {
            assertEquals(30, readAll(source).size());
            assertNull(source.next());
            assertEquals(0, source.decodeErrors());
        }
    }

    @Test
    void fileCutShortOfWhatItsContainerDeclaresFailsAfterItsFrames() throws IOException {
        byte[] whole = Files.readAllBytes(thirtyFrames("to-cut-30.mp4"));
        Path truncated = dir.resolve("cut-60-percent.mp4");
        Files.write(truncated, Arrays.copyOf(whole, whole.length * 6 / 10));
        List<VideoFrame> frames = new ArrayList<>();
        IOException e;
        try (FfmpegFrameSource source = FfmpegFrameSource.open(SourceSpec.of("cut-3", truncated.toString()))) {
            e = assertThrows(IOException.class, () -> {
                for (VideoFrame frame; (frame = source.next()) != null; ) {
                    frames.add(frame);
                }
            });
            assertEquals(e.getMessage(), assertThrows(IOException.class, source::next).getMessage(), "failed stays failed");
        }
        assertTrue(frames.size() > 5 && frames.size() < 27, frames.size() + " frames before the end");
        assertTrue(e.getMessage().startsWith("cut-3: " + truncated + " ends after " + frames.size()
                + " of 30 frames the container declares"), e.getMessage());
    }

    @Test
    void fileGarbledInTheMiddleFailsNamingTheReason() throws IOException {
        Path clip = thirtyFrames("to-garble-30.mp4");
        byte[] bytes = Files.readAllBytes(clip);
        int[] mdat = mp4Box(bytes, "mdat");
        int from = mdat[0] + mdat[1] * 4 / 10;
        Arrays.fill(bytes, from, from + mdat[1] * 3 / 10, (byte) 0xA5);
        Path garbled = dir.resolve("garbled.mp4");
        Files.write(garbled, bytes);
        List<VideoFrame> frames = new ArrayList<>();
        IOException e;
        try (FfmpegFrameSource source = FfmpegFrameSource.open(SourceSpec.of("garbled-1", garbled.toString()))) {
            e = assertThrows(IOException.class, () -> {
                for (VideoFrame frame; (frame = source.next()) != null; ) {
                    frames.add(frame);
                }
            });
            assertTrue(source.decodeErrors() > 0 || frames.size() < 27, source.decodeErrors() + " decode errors");
        }
        assertTrue(frames.size() > 5, frames.size() + " frames before the garbled part");
        String prefix = "garbled-1: " + garbled;
        assertTrue(e.getMessage().matches(Pattern.quote(prefix)
                + "( ends after \\d+ of 30 frames the container declares.*"
                + "|: \\d+ packets failed to decode \\(more than 10\\)"
                + "|: \\d+ of \\d+ packets failed to decode \\(more than 5 %\\))"), e.getMessage());
    }

    @Test
    void missingFileFails() {
        Path missing = dir.resolve("nothing-here.mp4");
        IOException e = assertThrows(IOException.class, () -> FrameSources.open(SourceSpec.of("gone", missing.toString())));
        assertEquals("gone: cannot open " + missing + ": No such file or directory", e.getMessage());
    }

    @Test
    void refusedConnectionFailsAtOnce() throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        IOException e = assertThrows(IOException.class,
                () -> FrameSources.open(SourceSpec.of("cam-9", "rtsp://admin:secret@127.0.0.1:" + port + "/live")));
        assertTrue(e.getMessage().startsWith("cam-9: cannot open rtsp://admin:***@127.0.0.1:" + port + "/live: "),
                e.getMessage());
        assertFalse(e.getMessage().contains("secret"));
    }

    @Test
    void silentServerTimesOutInsteadOfHanging() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            List<Socket> accepted = new CopyOnWriteArrayList<>();
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        accepted.add(silent.accept()); // then never answer
                    }
                } catch (IOException closed) {
                    // test over
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            // rw_timeout far away: the watchdog is what has to fire.
            SourceSpec spec = SourceSpec.of("mute", "http://127.0.0.1:" + silent.getLocalPort() + "/stream.ts")
                    .withOption("rw_timeout", "60000000").withOption("open_timeout_ms", "800");
            long start = System.nanoTime();
            IOException e = assertThrows(IOException.class, () -> FrameSources.open(spec));
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(e.getMessage().contains("timed out after 800 ms"), e.getMessage());
            assertTrue(millis < 5000, "took " + millis + " ms");
            for (Socket socket : accepted) {
                socket.close();
            }
        }
    }

    @Test
    void liveStreamThatStallsTimesOutAfterTheReadTimeout() throws IOException {
        SourceSpec spec = stallingStream("stall-1").withOption("read_timeout_ms", "700");
        int frames = 0;
        try (FrameSource source = FrameSources.open(spec)) {
            long start = System.nanoTime(); // the data in hand comes at once, then nothing
            IOException e = null;
            try {
                while (source.next() != null) {
                    frames++;
                }
            } catch (IOException stalled) {
                e = stalled;
            }
            assertNotNull(e, "the stream ended instead of stalling");
            long waited = (System.nanoTime() - start) / 1_000_000;
            assertTrue(e.getMessage().startsWith("stall-1: reading http://"), e.getMessage());
            assertTrue(e.getMessage().endsWith("failed: timed out after 700 ms waiting for data"), e.getMessage());
            assertTrue(waited >= 600 && waited < 5000, "gave up after " + waited + " ms");
        }
        assertTrue(frames > 3, frames + " frames before the stall");
    }

    @Test
    void closeFromAnotherThreadEndsABlockedRead() throws Exception {
        FrameSource source = FrameSources.open(stallingStream("stall-2").withOption("read_timeout_ms", "60000"));
        ExecutorService reader = Executors.newSingleThreadExecutor();
        try {
            AtomicInteger frames = new AtomicInteger();
            Future<IOException> outcome = reader.submit(() -> {
                try {
                    while (source.next() != null) {
                        frames.incrementAndGet();
                    }
                    return null;
                } catch (IOException e) {
                    return e;
                }
            });
            long deadline = System.nanoTime() + 10_000_000_000L;
            int seen = -1;
            while (seen != frames.get() && System.nanoTime() < deadline) { // until the reader is stuck
                seen = frames.get();
                Thread.sleep(300);
            }
            long start = System.nanoTime();
            source.close();
            IOException e = outcome.get(5, TimeUnit.SECONDS);
            assertTrue((System.nanoTime() - start) / 1_000_000 < 3000, "close took too long");
            assertNotNull(e);
            assertTrue(e.getMessage().endsWith("closed"), e.getMessage()); // in a read, or just before one
        } finally {
            reader.shutdownNow();
        }
    }

    @Test
    void missingCameraFailsNamingTheStream() {
        // Without the OS libraries libavdevice links (libpulse & co), the message says which are missing;
        // with them, that the device is not there. Either way: the stream, the device, the reason.
        IOException e = assertThrows(IOException.class, () -> FrameSources.open(SourceSpec.of("cam", "/dev/video99")));
        assertTrue(e.getMessage().startsWith("cam: cannot open "), e.getMessage());
        assertTrue(e.getMessage().contains("/dev/video99"), e.getMessage());
    }

    @Test
    void autoUsesTheCpuDecoderWithoutAGpuAndSaysWhy() throws IOException {
        ListAppender<ILoggingEvent> log = captureLog();
        try (FfmpegFrameSource source = FfmpegFrameSource.open(SourceSpec.of("a", mp4.toString()),
                SourceLocation.parse(mp4.toString()), () -> false)) {
            assertEquals("h264", source.decoderName());
            assertFalse(source.hardwareDecoding());
            assertTrue(source.describe().endsWith("(h264, cpu)"), source.describe());
        } finally {
            releaseLog(log);
        }
        String line = opened(log, "a");
        assertTrue(line.contains("decoder h264 (cpu: no NVIDIA GPU (/dev/nvidiactl absent))"), line);
    }

    @Test
    void autoFallsBackToTheCpuWhenNvdecCannotBeOpened() throws IOException {
        ListAppender<ILoggingEvent> log = captureLog();
        try (FfmpegFrameSource source = FfmpegFrameSource.open(SourceSpec.of("b", mp4.toString()),
                SourceLocation.parse(mp4.toString()), () -> true)) {
            if (source.hardwareDecoding()) {
                return; // a real GPU: NVDEC opened, nothing to fall back from
            }
            assertEquals("h264", source.decoderName());
            assertEquals(FRAMES, readAll(source).size());
        } finally {
            releaseLog(log);
        }
        String line = opened(log, "b");
        assertTrue(line.contains("decoder h264 (cpu: NVDEC (h264_cuvid) could not be opened: "), line);
    }

    @Test
    void nvdecEitherDecodesOrSaysWhyNot() throws IOException {
        SourceSpec spec = SourceSpec.of("gpu-1", mp4.toString()).withDecoder(DecoderPreference.NVDEC);
        FfmpegFrameSource source;
        try {
            source = FfmpegFrameSource.open(spec);
        } catch (IOException e) {
            assertTrue(e.getMessage().startsWith("gpu-1: decoder nvdec requested, but h264_cuvid cannot be used: "),
                    e.getMessage());
            return;
        }
        // On the GPU machine: NVDEC decodes the same frames.
        try (source) {
            assertEquals("h264_cuvid", source.decoderName());
            List<VideoFrame> frames = readAll(source);
            assertEquals(FRAMES, frames.size());
            assertColour(TestVideos.COLOURS[1], frames.get(1), 8);
        }
    }

    @Test
    void nvdecRefusesCodecsItIsNotUsedFor() throws IOException {
        Path avi = TestVideos.write(dir.resolve("for-nvdec.avi"), 2, "mpeg4");
        IOException e = assertThrows(IOException.class,
                () -> FfmpegFrameSource.open(SourceSpec.of("m", avi.toString()).withDecoder(DecoderPreference.NVDEC)));
        assertEquals("m: decoder nvdec requested, but NVDEC is used for H.264 and HEVC only and this stream is mpeg4",
                e.getMessage());
    }

    @Test
    void closedSourceRefusesToRead() throws IOException {
        FrameSource source = FrameSources.open(SourceSpec.of("c", mp4.toString()));
        assertNotNull(source.next());
        source.close();
        source.close();
        IOException e = assertThrows(IOException.class, source::next);
        assertEquals("c: source is closed", e.getMessage());
    }

    static List<VideoFrame> readAll(FrameSource source) throws IOException {
        List<VideoFrame> frames = new ArrayList<>();
        for (VideoFrame frame; (frame = source.next()) != null; ) {
            frames.add(frame);
        }
        return frames;
    }

    /** {offset, size} of the first top-level MP4 box of that type. */
    private static int[] mp4Box(byte[] file, String type) {
        int at = 0;
        while (at + 8 <= file.length) {
            int size = java.nio.ByteBuffer.wrap(file, at, 4).getInt();
            if (new String(file, at + 4, 4, java.nio.charset.StandardCharsets.US_ASCII).equals(type)) {
                return new int[] {at, size};
            }
            at += size;
        }
        throw new AssertionError("no " + type + " box");
    }

    static void assertColour(int[] expected, VideoFrame frame, double tolerance) {
        double[] mean = TestVideos.meanColour(frame);
        for (int c = 0; c < 3; c++) {
            assertEquals(expected[c], mean[c], tolerance,
                    "channel " + c + " of frame " + frame.index() + ": " + Arrays.toString(mean));
        }
    }

    private static ListAppender<ILoggingEvent> captureLog() {
        Logger logger = (Logger) LoggerFactory.getLogger(FfmpegFrameSource.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        logger.setLevel(Level.INFO);
        logger.setAdditive(false); // captured, not printed
        return appender;
    }

    private static void releaseLog(ListAppender<ILoggingEvent> appender) {
        Logger logger = (Logger) LoggerFactory.getLogger(FfmpegFrameSource.class);
        logger.detachAppender(appender);
        logger.setLevel(null);
        logger.setAdditive(true);
    }

    private static String opened(ListAppender<ILoggingEvent> log, String streamId) {
        return log.list.stream().map(ILoggingEvent::getFormattedMessage)
                .filter(line -> line.startsWith(streamId + ": opened "))
                .findFirst().orElseThrow(() -> new AssertionError("no 'opened' line for " + streamId + " in " + log.list));
    }

    /** An MPEG-TS over HTTP that delivers 60% of its bytes (6 s of video), then nothing, without closing. */
    private static SourceSpec stallingStream(String streamId) {
        String url = "http://127.0.0.1:" + http.getAddress().getPort() + "/stall/long.ts";
        return SourceSpec.of(streamId, url).withOption("analyzeduration", "500000"); // probe 0.5 s, not 5
    }

    private static void serveHalfThenStall(HttpExchange exchange) throws IOException {
        byte[] bytes = Files.readAllBytes(ts);
        exchange.getResponseHeaders().set("Content-Type", "video/mp2t");
        exchange.sendResponseHeaders(200, 0); // chunked: no length, so no end in sight
        OutputStream out = exchange.getResponseBody();
        out.write(bytes, 0, bytes.length * 6 / 10);
        out.flush();
        try {
            STALLS_END.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        exchange.close();
    }

    /** Serves files of the temp directory with byte ranges, as FFmpeg's HTTP client seeks in an MP4. */
    private static void serveFile(HttpExchange exchange) throws IOException {
        Path file = dir.resolve(exchange.getRequestURI().getPath().substring(1));
        if (!Files.isRegularFile(file)) {
            exchange.sendResponseHeaders(404, -1);
            exchange.close();
            return;
        }
        byte[] bytes = Files.readAllBytes(file);
        int from = 0;
        int to = bytes.length - 1;
        int status = 200;
        String range = exchange.getRequestHeaders().getFirst("Range");
        Matcher matcher = range == null ? null : Pattern.compile("bytes=(\\d+)-(\\d*)").matcher(range);
        if (matcher != null && matcher.matches()) {
            from = Integer.parseInt(matcher.group(1));
            if (!matcher.group(2).isEmpty()) {
                to = Math.min(to, Integer.parseInt(matcher.group(2)));
            }
            status = 206;
            exchange.getResponseHeaders().set("Content-Range", "bytes " + from + "-" + to + "/" + bytes.length);
        }
        exchange.getResponseHeaders().set("Accept-Ranges", "bytes");
        exchange.getResponseHeaders().set("Content-Type", "video/mp4");
        int length = Math.max(0, to - from + 1);
        exchange.sendResponseHeaders(status, length == 0 ? -1 : length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes, from, length);
        }
    }

}
