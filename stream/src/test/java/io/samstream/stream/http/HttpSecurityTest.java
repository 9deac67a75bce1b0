package io.samstream.stream.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ConfigException;
import io.samstream.config.ConfigLoader;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The token and TLS paths against a running engine: HTTPS from a keytool-made PKCS#12 key store, every call but the
 * probes and the static files needs the bearer token (header; for previews also the query parameter or the WebSocket
 * subprotocol), and an open address without a token does not start.
 */
@Timeout(120)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpSecurityTest {
    private static final String TOKEN = "test-token-0123456789abcdef-XYZ";
    private static final String PASSWORD = "store-pass-1234";
    @TempDir
    static Path dir;
    private ApiEngine api;

    @BeforeAll
    void start() throws Exception {
        Path keyStore = dir.resolve("server.p12");
        keytool("-genkeypair", "-alias", "server", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
                "-dname", "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-storetype", "PKCS12",
                "-keystore", keyStore.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD);
        KeyStore trust = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keyStore)) {
            trust.load(in, PASSWORD.toCharArray());
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust); // the self-signed certificate is its own trust anchor
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, tmf.getTrustManagers(), null);
        api = ApiEngine.start(dir, """
                sinks.kafka = off
                http { token = "%s", tls { keystore = "%s", password = "%s" } }
                streams = [ { id = cam, location = "testpattern:64x48@10?live=true", prompts.grid = 1 } ]
                """.formatted(TOKEN, keyStore, PASSWORD), HttpClient.newBuilder().sslContext(tls)
                .connectTimeout(Duration.ofSeconds(10)).build());
        ApiEngine.waitFor(() -> api.runtime.engine().stream("cam").map(h -> h.published() >= 2).orElse(false),
                Duration.ofSeconds(60), "cam publishes");
    }

    @AfterAll
    void stop() {
        if (api != null) {
            api.close();
        }
    }

    @Test
    void itServesHttpsOnly() throws Exception {
        assertEquals("https", api.base.getScheme());
        HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        assertThrows(IOException.class, () -> plain.send(HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + api.base.getPort() + "/health/live"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()));
    }

    @Test
    void everyCallButTheProbesNeedsTheToken() throws Exception {
        for (String path : List.of("/api/v1/streams", "/api/v1/streams/cam", "/api/v1/engine", "/api/v1/openapi.json",
                "/metrics", "/api/v1/streams/cam/frame.jpg", "/api/v1/streams/cam/live?format=mjpeg")) {
            HttpResponse<String> none = api.get(path);
            HttpApiTest.assertError(none, 401, "Authorization");
            assertEquals("Bearer realm=\"samstream\"", none.headers().firstValue("WWW-Authenticate").orElse(""));
            HttpApiTest.assertError(get(path, "Bearer wrong-token-0123456789abcdef"), 401, "Authorization");
            HttpApiTest.assertError(get(path, "Basic " + java.util.Base64.getEncoder().encodeToString(
                    ("x:" + TOKEN).getBytes(StandardCharsets.UTF_8))), 401, "Authorization");
        }
        HttpApiTest.assertError(api.send("PUT", "/api/v1/streams/x", "{\"location\": \"y.mp4\"}"), 401, "Authorization");
        HttpApiTest.assertError(api.send("POST", "/api/v1/streams/cam/prompts", "{\"op\": \"reset\"}"), 401,
                "Authorization");
        HttpApiTest.assertError(api.send("DELETE", "/api/v1/streams/cam", null), 401, "Authorization");
        assertEquals("running", api.runtime.engine().stream("cam").orElseThrow().state().name().toLowerCase(),
                "nothing changed without the token");

        assertEquals(200, get("/api/v1/streams", "Bearer " + TOKEN).statusCode());
        assertEquals(200, get("/api/v1/streams", "bearer " + TOKEN).statusCode(), "the scheme is case-insensitive");
        assertEquals(200, get("/metrics", "Bearer " + TOKEN).statusCode());
        HttpResponse<String> prompt = api.client.send(api.request("/api/v1/streams/cam/prompts")
                .header("Authorization", "Bearer " + TOKEN).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"op\": \"reset\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, prompt.statusCode(), prompt.body());
        // The probes and the static files (no data in them) need none.
        assertEquals(200, api.get("/health/live").statusCode());
        assertEquals(200, api.get("/health/ready").statusCode());
        assertEquals(200, api.get("/").statusCode());
        assertEquals(200, api.get("/api/docs/").statusCode());
    }

    @Test
    void previewsAlsoTakeTheTokenAsQueryParameterOthersDoNot() throws Exception {
        HttpResponse<byte[]> frame = api.client.send(api.request("/api/v1/streams/cam/frame.jpg?width=32&access_token="
                + TOKEN).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, frame.statusCode());
        assertEquals("image/jpeg", frame.headers().firstValue("Content-Type").orElse(""));
        HttpApiTest.assertError(api.get("/api/v1/streams/cam/frame.jpg?access_token=wrong-token-0123456789"), 401,
                "Authorization");
        HttpApiTest.assertError(api.get("/api/v1/streams?access_token=" + TOKEN), 401, "Authorization");
        HttpApiTest.assertError(api.get("/metrics?access_token=" + TOKEN), 401, "Authorization");
    }

    @Test
    void aWebSocketGivesTheTokenAsSubprotocolAndGetsSamstreamBack() throws Exception {
        java.net.URI uri = java.net.URI.create("wss://127.0.0.1:" + api.base.getPort() + "/api/v1/streams/cam/live?width=32");
        HttpApiTest.Frames frames = new HttpApiTest.Frames(2);
        WebSocket ws = api.client.newWebSocketBuilder().subprotocols(LiveRoutes.SUBPROTOCOL, "bearer." + TOKEN)
                .buildAsync(uri, frames).get(30, TimeUnit.SECONDS);
        try {
            assertEquals(LiveRoutes.SUBPROTOCOL, ws.getSubprotocol(), "the token is never echoed");
            frames.done.get(30, TimeUnit.SECONDS);
            assertEquals("BT", frames.order.substring(0, 2));
        } finally {
            ws.abort();
        }
        List<String[]> refused = new ArrayList<>();
        refused.add(new String[] {LiveRoutes.SUBPROTOCOL});
        refused.add(new String[] {LiveRoutes.SUBPROTOCOL, "bearer.wrong-token-0123456789"});
        for (String[] protocols : refused) {
            var attempt = api.client.newWebSocketBuilder().subprotocols(protocols[0],
                    java.util.Arrays.copyOfRange(protocols, 1, protocols.length)).buildAsync(uri, new WebSocket.Listener() {});
            ExecutionException e = assertThrows(ExecutionException.class, () -> attempt.get(30, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof java.net.http.WebSocketHandshakeException h
                    && h.getResponse().statusCode() == 401, String.valueOf(e.getCause()));
        }
    }

    @Test
    void anOpenAddressWithoutATokenDoesNotStart() throws Exception {
        Path conf = Files.writeString(dir.resolve("open.conf"), "samstream.http.host = \"0.0.0.0\"");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(conf));
        assertTrue(e.getMessage().contains("samstream.http.token"), e.getMessage());
    }

    private HttpResponse<String> get(String path, String authorization) throws IOException, InterruptedException {
        return api.client.send(api.request(path).header("Authorization", authorization).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("keytool " + args[0] + " failed: " + out.strip());
        }
    }
}
