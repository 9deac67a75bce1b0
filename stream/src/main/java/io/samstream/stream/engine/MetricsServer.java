package io.samstream.stream.engine;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The Prometheus scrape endpoint: {@code GET http://host:port/metrics}, on the JDK's own HTTP server. */
public final class MetricsServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MetricsServer.class);

    private final HttpServer server;

    private MetricsServer(HttpServer server) {
        this.server = server;
    }

    public static MetricsServer start(PrometheusMeterRegistry registry, String host, int port) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 0);
        server.createContext("/metrics", exchange -> {
            try (exchange) {
                if (!"GET".equals(exchange.getRequestMethod()) && !"HEAD".equals(exchange.getRequestMethod())) {
                    exchange.sendResponseHeaders(405, -1);
                    return;
                }
                byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
                exchange.sendResponseHeaders(200, "HEAD".equals(exchange.getRequestMethod()) ? -1 : body.length);
                if (!"HEAD".equals(exchange.getRequestMethod())) {
                    try (OutputStream out = exchange.getResponseBody()) {
                        out.write(body);
                    }
                }
            }
        });
        server.setExecutor(null);
        server.start();
        MetricsServer s = new MetricsServer(server);
        log.info("metrics: http://{}:{}/metrics", host, s.port());
        return s;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
