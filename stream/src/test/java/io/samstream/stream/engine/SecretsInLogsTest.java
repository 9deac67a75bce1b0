package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.samstream.config.PromptSpec;
import io.samstream.gpu.model.SamBackend;
import io.samstream.stream.app.VideoConnectors;
import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * Finding 7 of issue #31: a stream URL's credentials were logged in clear at start
 * ({@code rtsp://admin:s3cretPW@...}). Every log line of a run with such streams, the real FFmpeg sources'
 * included, is captured: no secret and no raw line break in any of them, nor in the streams' errors.
 */
@Timeout(120)
class SecretsInLogsTest {
    @Test
    void credentialsInLocationsNeverReachALogLineOrAnError() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort(); // closed again: connections are refused at once
        }
        ListAppender<ILoggingEvent> captured = new ListAppender<>();
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        captured.start();
        root.addAppender(captured);
        String live = "rtsp://admin:s3cretPW@127.0.0.1:" + closedPort + "/live?token=T0KEN";
        String forged = "http://cam:pa55word@127.0.0.1:" + closedPort + "/x.mp4\n12:00:00.000 ERROR Engine - FORGED";
        try (SamBackend backend = TestSources.tinyBackend();
             Engine engine = new Engine(TestSources.settings(2, 1, 8), new Segmenter(backend, "tiny"),
                     VideoConnectors.sources(), new CollectingSink(), EngineMetrics.inMemory())) {
            PromptSpec prompts = TestSources.onePoint(4, 4);
            StreamHandle cam = engine.add(TestSources.spec("cam", live, true, prompts));
            StreamHandle file = engine.add(TestSources.spec("file", forged, false, prompts));
            StreamHandle.Result r = file.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            assertEquals(StreamHandle.State.FAILED, r.state());
            String error = r.error().orElseThrow().getMessage();
            assertFalse(error.contains("pa55word") || error.contains("\n"), error);
            // the live one fails, is restarted and fails again: its lines are all there
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (lines(captured).stream().noneMatch(l -> l.contains("stream cam: reconnecting (restart 1)"))
                    && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            engine.remove("cam");
            cam.result().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } finally {
            root.detachAppender(captured);
        }
        List<String> lines = lines(captured);
        assertTrue(lines.stream().anyMatch(l -> l.contains("stream cam: started (rtsp://admin:***@127.0.0.1:")
                && l.contains("token=***")), String.join("\n", lines));
        assertTrue(lines.stream().anyMatch(l -> l.contains("stream cam: live source failed")), String.join("\n", lines));
        for (String l : lines) {
            assertFalse(l.contains("s3cretPW") || l.contains("T0KEN") || l.contains("pa55word"), l);
            assertFalse(l.contains("\n") || l.contains("\r"), l);
        }
    }

    private static List<String> lines(ListAppender<ILoggingEvent> appender) {
        return List.copyOf(appender.list).stream().map(ILoggingEvent::getFormattedMessage).toList();
    }
}
