package io.samstream.stream.http;

import io.samstream.config.ConfigLoader;
import io.samstream.config.SamstreamConfig;
import io.samstream.stream.app.SamstreamRuntime;
import io.samstream.stream.app.VideoConnectors;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * A running engine with its HTTP server, made from a configuration as {@code samstream run} makes it (the tiny test
 * model on the CPU, a free port, an embedded broker's data under the test's folder), and a real HTTP client
 * (java.net.http) for it.
 */
final class ApiEngine implements AutoCloseable {
    static final String TINY = Path.of("../gpu/src/test/resources/fixtures/tiny256/model.pth").toAbsolutePath()
            .toString();

    final SamstreamRuntime runtime;
    final HttpClient client;
    final URI base;

    private ApiEngine(SamstreamRuntime runtime, HttpClient client) {
        this.runtime = runtime;
        this.client = client;
        this.base = URI.create(runtime.httpServer().orElseThrow().url());
    }

    /** An engine of {@code samstream { ... }} settings (HOCON, inside the samstream block) on the tiny model. */
    static ApiEngine start(Path dir, String settings) throws IOException {
        return start(dir, settings, HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build());
    }

    static ApiEngine start(Path dir, String settings, HttpClient client) throws IOException {
        return start(dir, Path.of(TINY), settings, client);
    }

    /** An engine of that checkpoint (e.g. a tiny SAM 3's) and {@code samstream { ... }} settings. */
    static ApiEngine start(Path dir, Path checkpoint, String settings, HttpClient client) throws IOException {
        Path conf = Files.writeString(Files.createTempFile(dir, "api", ".conf"), """
                samstream {
                  model.checkpoint = "%s"
                  device = cpu
                  cpu.threads = 2
                  batching.max-latency = 5ms
                  http.port = 0
                  kafka.embedded-broker-dir = "%s"
                  %s
                }
                """.formatted(checkpoint.toAbsolutePath(), dir.resolve("kafka-data").toAbsolutePath(), settings));
        SamstreamConfig config = ConfigLoader.load(conf);
        return new ApiEngine(SamstreamRuntime.start(config, VideoConnectors.sources(), c -> Optional.empty()), client);
    }

    HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(20));
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return client.send(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> send(String method, String path, String json) throws IOException, InterruptedException {
        return client.send(request(path).header("Content-Type", "application/json")
                .method(method, json == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
    }

    static void waitFor(BooleanSupplier condition, Duration limit, String what) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + limit.toSeconds() + " s: " + what);
            }
            Thread.sleep(20);
        }
    }

    @Override
    public void close() {
        runtime.close();
    }
}
