package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.samstream.gpu.model.SamBackend;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
                "samstream_batch_size_count",
                "samstream_encoder_time_seconds_count",
                "samstream_decoder_time_seconds_count 3",
                "samstream_latency_capture_to_ack_seconds_bucket",
                "samstream_batches_in_flight 0.0",
                "samstream_queue_depth{queue=\"pending-acks\"} 0.0",
                "samstream_sink_send_errors_total 0.0"}) {
                assertTrue(body.contains(line), "missing " + line + " in\n" + body);
            }
        }
    }
}
