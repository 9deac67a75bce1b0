package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.samstream.gpu.model.SamBackend;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The scrape endpoint shows the engine's meters after a run. */
@Timeout(120)
class MetricsServerTest {
    @Test
    void prometheusEndpointServesTheEngineMeters() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        EngineMetrics metrics = new EngineMetrics(registry);
        try (SamBackend backend = TestSources.tinyBackend();
             MetricsServer server = MetricsServer.start(registry, "127.0.0.1", 0);
             Engine engine = new Engine(TestSources.settings(2, 1, 4), new Segmenter(backend, "tiny256"),
                     spec -> TestSources.Synthetic.file(spec.id(), 32, 24, 3), new CollectingSink(), metrics)) {
            engine.add(TestSources.spec("m1", "m1.mp4", false, TestSources.onePoint(3, 3)))
                    .result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + server.port() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            String body = r.body();
            for (String line : new String[] {
                "samstream_frames_decoded_total{stream=\"m1\"} 3.0",
                "samstream_frames_published_total{stream=\"m1\"} 3.0",
                "samstream_frames_dropped_total{stream=\"m1\"} 0.0",
                "samstream_batch_size_count{gpu=\"cpu\"}",
                "samstream_encoder_time_seconds_count{gpu=\"cpu\"}",
                "samstream_decoder_time_seconds_count{gpu=\"cpu\"} 3",
                "samstream_stage_time_seconds_count{gpu=\"cpu\",stage=\"ack\"} 3",
                "samstream_latency_capture_to_ack_seconds_bucket",
                "samstream_batches_in_flight{gpu=\"cpu\"} 0.0",
                "samstream_gpu_streams{gpu=\"cpu\"} 0.0",
                "samstream_queue_depth{gpu=\"cpu\",queue=\"pending-acks\"} 0.0",
                "samstream_sink_send_errors_total 0.0"}) {
                assertTrue(body.contains(line), "missing " + line + " in\n" + body);
            }
        }
    }

    @Test
    void stalledAndSlowClientsDoNotBlockOthers() throws Exception {
        // Before: one connection that sent half a request held the server's only thread; /metrics hung.
        String big = "x".repeat(24 << 20) + "\n"; // more than both sockets buffer: a non-reader blocks a write
        List<Socket> stalled = new ArrayList<>();
        try (MetricsServer server = MetricsServer.start(() -> big, "127.0.0.1", 0, 1, Duration.ofSeconds(30),
                Duration.ofSeconds(60))) {
            for (int i = 0; i < 10; i++) { // 10 silent, 10 half requests, 3 that never read
                stalled.add(new Socket("127.0.0.1", server.port())); // connects, sends nothing
                Socket half = new Socket("127.0.0.1", server.port());
                half.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
                stalled.add(half);
                if (i < 3) {
                    Socket nonReader = new Socket("127.0.0.1", server.port());
                    nonReader.getOutputStream().write("GET /metrics HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    stalled.add(nonReader);
                }
            }
            Thread.sleep(500); // the non-readers' responses are stuck in their sockets by now

            HttpResponse<String> r = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> HttpClient.newHttpClient()
                    .send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/metrics"))
                            .timeout(Duration.ofSeconds(8)).build(), HttpResponse.BodyHandlers.ofString()));
            assertEquals(200, r.statusCode());
            assertEquals(big.length(), r.body().length());
            assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
        } finally {
            for (Socket s : stalled) {
                s.close();
            }
        }
    }

    @Test
    void clientsThatDoNotReadAreClosedAtTheDeadline() throws Exception {
        String big = "x".repeat(24 << 20) + "\n";
        try (MetricsServer server = MetricsServer.start(() -> big, "127.0.0.1", 0, 1, Duration.ofSeconds(5),
                Duration.ofMillis(500));
             Socket nonReader = new Socket("127.0.0.1", server.port())) {
            nonReader.getOutputStream().write("GET /metrics HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            Thread.sleep(1500);
            nonReader.setSoTimeout(5000);
            byte[] received = assertTimeoutPreemptively(Duration.ofSeconds(10),
                    () -> nonReader.getInputStream().readAllBytes());
            assertTrue(received.length < big.length(), "cut off at the deadline after " + received.length + " bytes");
        }
    }

    @Test
    void clientsThatSendNothingAreClosedAtTheRequestTimeout() throws Exception {
        try (MetricsServer server = MetricsServer.start(() -> "x 1.0\n", "127.0.0.1", 0, 1,
                Duration.ofMillis(300), Duration.ofSeconds(60));
             Socket silent = new Socket("127.0.0.1", server.port())) {
            silent.setSoTimeout(5000);
            long t0 = System.nanoTime();
            assertEquals(-1, silent.getInputStream().read(), "closed without a response");
            assertTrue(System.nanoTime() - t0 < 4_000_000_000L);

            // The only worker is free again: a real request is served.
            try (Socket client = new Socket("127.0.0.1", server.port())) {
                client.setSoTimeout(5000);
                client.getOutputStream().write("HEAD /metrics HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                String head = new String(client.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
                assertTrue(head.startsWith("HTTP/1.1 200 OK\r\n"), head);
                assertTrue(head.contains("Content-Length: 6\r\n") && head.endsWith("\r\n\r\n"), head);
            }
        }
    }

    @Test
    void otherPathsAndMethodsAreRefused() throws Exception {
        try (MetricsServer server = MetricsServer.start(() -> "x 1.0\n", "127.0.0.1", 0, 1,
                Duration.ofSeconds(5), Duration.ofSeconds(10))) {
            HttpClient http = HttpClient.newHttpClient();
            URI base = URI.create("http://127.0.0.1:" + server.port());
            assertEquals(404, http.send(HttpRequest.newBuilder(base.resolve("/other")).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode());
            HttpResponse<Void> post = http.send(HttpRequest.newBuilder(base.resolve("/metrics"))
                    .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.discarding());
            assertEquals(405, post.statusCode());
            assertEquals("GET, HEAD", post.headers().firstValue("Allow").orElse(""));
        }
    }
}
