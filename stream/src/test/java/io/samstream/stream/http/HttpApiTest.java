package io.samstream.stream.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The API against a running engine without Kafka (changes act on the engine itself): every route, its errors and
 * limits, previews, probes, /metrics, static files; one client's idle sockets leave the others served.
 */
@Timeout(120)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SECRET = "s3cretPW";
    @TempDir
    static Path dir;
    private ApiEngine api;

    @BeforeAll
    void start() throws Exception {
        api = ApiEngine.start(dir, """
                sinks.kafka = off
                http { max-viewers = 3, prompt-rate = 20, max-body = 4 KiB }
                tracking { min-predicted-iou = 0, min-stability = 0, lost-after = 10000, hidden-lost-after = 10000,
                           merge-iou = 1.0 }
                streams = [
                  { id = cam, location = "testpattern:128x96@10?live=true&seed=3",
                    prompts { objects = [ { id = 1, box = [10, 10, 60, 60] } ], grid = 0 } }
                  { id = locked, location = "rtsp://admin:%s@127.0.0.1:1/live", prompts.grid = 0 }
                ]
                """.formatted(SECRET));
        ApiEngine.waitFor(() -> api.runtime.engine().stream("cam").map(h -> h.published() >= 5).orElse(false),
                Duration.ofSeconds(60), "cam publishes");
    }

    @AfterAll
    void stop() {
        if (api != null) {
            api.close();
        }
    }

    @Test
    void streamsAreListedWithTheirFiguresObjectsAndMaskedLocations() throws Exception {
        HttpResponse<String> r = api.get("/api/v1/streams");
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
        assertFalse(r.body().contains(SECRET), "no credentials in an answer: " + r.body());
        JsonNode streams = JSON.readTree(r.body()).get("streams");
        JsonNode cam = find(streams, "cam");
        assertEquals("running", cam.get("state").asText());
        assertEquals("testpattern:128x96@10?live=true&seed=3", cam.get("location").asText());
        assertTrue(cam.get("live").asBoolean());
        assertTrue(cam.get("frames").get("published").asLong() >= 5, cam.toString());
        assertTrue(cam.get("fps").asDouble() > 0, cam.toString());
        assertTrue(cam.get("latency_ms").get("p99").asDouble() >= cam.get("latency_ms").get("p50").asDouble());
        assertEquals(128, cam.get("frame").get("width").asInt());
        assertEquals(1, cam.get("objects").get(0).get("id").asInt(), cam.toString());
        assertEquals(1, cam.get("prompted").get(0).asInt(), "the ids of its prompts: " + cam);
        assertTrue(List.of("visible", "hidden", "lost").contains(cam.get("objects").get(0).get("state").asText()));
        assertEquals("rtsp://admin:***@127.0.0.1:1/live", find(streams, "locked").get("location").asText());

        JsonNode one = JSON.readTree(api.get("/api/v1/streams/cam").body());
        assertEquals("cam", one.get("id").asText());
        assertEquals(cam.get("location"), one.get("location"));

        assertError(api.get("/api/v1/streams/nope"), 404, "id");
        assertError(api.get("/api/v1/streams/bad%20id"), 400, "id");
    }

    @Test
    void streamsArePutAndDeletedOnThisEngine() throws Exception {
        String def = "{\"location\": \"testpattern:64x48@10?live=true\", \"prompts\": {\"grid\": 1}}";
        HttpResponse<String> put = api.send("PUT", "/api/v1/streams/added", def);
        assertEquals(201, put.statusCode(), put.body());
        assertEquals("added", JSON.readTree(put.body()).get("id").asText());
        assertEquals(200, api.get("/api/v1/streams/added").statusCode());
        assertEquals(200, api.send("PUT", "/api/v1/streams/added", def).statusCode(), "redefined");
        assertError(api.send("PUT", "/api/v1/streams/other", "{\"live\": true}"), 400, "location");
        assertError(api.send("PUT", "/api/v1/streams/other", "{\"location\": \"x.mp4\", \"colour\": 3}"), 400, "colour");
        assertError(api.send("PUT", "/api/v1/streams/other", "{not json"), 400, "body");
        assertEquals(404, api.get("/api/v1/streams/other").statusCode(), "a refused definition starts nothing");
        HttpResponse<String> del = api.send("DELETE", "/api/v1/streams/added", null);
        assertEquals(204, del.statusCode(), del.body());
        ApiEngine.waitFor(() -> api.runtime.engine().stream("added").isEmpty(), Duration.ofSeconds(20), "removed");
        assertError(api.send("DELETE", "/api/v1/streams/added", null), 404, "id");
    }

    @Test
    void promptsApplyFromAFrameAndRefusalsSayWhy() throws Exception {
        HttpResponse<String> add = api.send("POST", "/api/v1/streams/cam/prompts",
                "{\"op\": \"add\", \"object\": 5, \"points\": [[20, 30, 1]]}");
        assertEquals(200, add.statusCode(), add.body());
        JsonNode a = JSON.readTree(add.body());
        assertTrue(a.get("applied").asBoolean());
        assertTrue(a.get("frame").asLong() > api.runtime.engine().stream("cam").orElseThrow().lastPublished() - 20,
                "applies from the next frame the decoder takes: " + a);
        ApiEngine.waitFor(() -> objectIds("cam").contains(5), Duration.ofSeconds(20), "object 5 tracked");

        assertRejected(api.send("POST", "/api/v1/streams/cam/prompts",
                "{\"op\": \"add\", \"object\": 5, \"points\": [[20, 30, 1]]}"), 409, "object", "object_exists");
        assertRejected(api.send("POST", "/api/v1/streams/cam/prompts",
                "{\"op\": \"add\", \"object\": 6, \"points\": [[1000, 30, 1]]}"), 400, "points", "outside_frame");
        assertRejected(api.send("POST", "/api/v1/streams/cam/prompts", "{\"op\": \"fly\", \"object\": 6}"), 400, "op",
                "unknown_op");
        assertRejected(api.send("POST", "/api/v1/streams/cam/prompts", "{\"op\": "), 400, "body", "malformed_json");
        assertRejected(api.send("POST", "/api/v1/streams/cam/prompts",
                "{\"stream\": \"locked\", \"op\": \"reset\"}"), 400, "stream", "key_mismatch");
        assertRejected(api.send("POST", "/api/v1/streams/cam/prompts", "{\"op\": \"remove\", \"object\": 77}"), 404,
                "object", "unknown_object");
        assertRejected(api.send("POST", "/api/v1/streams/ghost/prompts", "{\"op\": \"reset\"}"), 404, "stream",
                "unknown_stream");
        // SAM 3's concept ops are the topic's too: a SAM engine refuses them, saying which model they need.
        assertRejected(api.send("POST", "/api/v1/streams/cam/prompts", "{\"op\": \"concept\", \"text\": \"cup\"}"),
                400, "op", "wrong_model");
        assertRejected(api.send("POST", "/api/v1/streams/cam/prompts", "{\"op\": \"concept\"}"), 400, "text",
                "bad_concept");
        HttpResponse<String> remove = api.send("POST", "/api/v1/streams/cam/prompts",
                "{\"op\": \"remove\", \"object\": 5}");
        assertEquals(200, remove.statusCode(), remove.body());
        ApiEngine.waitFor(() -> !objectIds("cam").contains(5), Duration.ofSeconds(20), "object 5 removed");
        assertEquals("running", JSON.readTree(api.get("/api/v1/streams/cam").body()).get("state").asText(),
                "refused prompts leave the stream running");
    }

    @Test
    void bodiesMustBeJsonAndAtMostMaxBody() throws Exception {
        HttpResponse<String> text = api.client.send(api.request("/api/v1/streams/cam/prompts")
                .header("Content-Type", "text/plain").POST(java.net.http.HttpRequest.BodyPublishers.ofString(
                        "{\"op\": \"reset\"}")).build(), HttpResponse.BodyHandlers.ofString());
        assertError(text, 415, "Content-Type");
        String big = "{\"op\": \"reset\", \"pad\": \"" + "x".repeat(5000) + "\"}";
        assertError(api.send("POST", "/api/v1/streams/cam/prompts", big), 413, "max-body");
        assertError(api.send("PUT", "/api/v1/streams/big", big), 413, "max-body");
    }

    @Test
    void promptCallsOverTheRateAreRefused() throws Exception {
        Thread.sleep(1100); // a full bucket: 20 calls at once, then 20 a second
        String body = "{\"op\": \"remove\", \"object\": 99}";
        String call = "POST /api/v1/streams/cam/prompts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + body.length() + "\r\n\r\n" + body;
        int n = 60;
        long t0 = System.nanoTime();
        String answers = raw(call.repeat(n - 1) + call.replace("Host: x", "Host: x\r\nConnection: close"));
        double seconds = (System.nanoTime() - t0) / 1e9;
        int refused = answers.split("HTTP/1.1 429 ", -1).length - 1;
        int notFound = answers.split("HTTP/1.1 404 ", -1).length - 1;
        assertEquals(n, refused + notFound, answers);
        // The bucket admits at most its burst plus the rate over the time taken, however fast the machine.
        assertTrue(notFound <= 20 + Math.ceil(20 * seconds) + 1, notFound + " admitted in " + seconds + " s");
        assertTrue(refused >= 1, "some refused");
        assertTrue(answers.contains("\"field\":\"prompt-rate\""), answers);
        Thread.sleep(1100);
    }

    @Test
    void aFrameIsAJpegOfTheAskedWidth() throws Exception {
        HttpResponse<byte[]> r = api.client.send(api.request("/api/v1/streams/cam/frame.jpg?width=64").build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, r.statusCode());
        assertEquals("image/jpeg", r.headers().firstValue("Content-Type").orElse(""));
        BufferedImage img = ImageIO.read(new ByteArrayInputStream(r.body()));
        assertEquals(64, img.getWidth());
        assertEquals(48, img.getHeight());
        assertTrue(Long.parseLong(r.headers().firstValue("X-Samstream-Frame").orElseThrow()) >= 0);
        assertError(api.get("/api/v1/streams/cam/frame.jpg?width=4"), 400, "width");
        assertError(api.get("/api/v1/streams/cam/frame.jpg?width=wide"), 400, "width");
        assertError(api.get("/api/v1/streams/nope/frame.jpg"), 404, "id");
    }

    @Test
    void aWebSocketViewerGetsJpegsAndTheirObjects() throws Exception {
        Frames frames = new Frames(4);
        WebSocket ws = api.client.newWebSocketBuilder().subprotocols(LiveRoutes.SUBPROTOCOL)
                .buildAsync(wsUri("/api/v1/streams/cam/live?width=96"), frames).get(30, TimeUnit.SECONDS);
        try {
            assertEquals(LiveRoutes.SUBPROTOCOL, ws.getSubprotocol());
            frames.done.get(30, TimeUnit.SECONDS);
            BufferedImage img = ImageIO.read(new ByteArrayInputStream(frames.binary.get(0)));
            assertEquals(96, img.getWidth());
            JsonNode objects = JSON.readTree(frames.text.get(0));
            assertEquals("cam", objects.get("stream").asText());
            assertEquals(128, objects.get("width").asInt());
            assertEquals(96, objects.get("preview_width").asInt());
            assertTrue(objects.get("frame").asLong() >= 0 && objects.has("objects") && objects.has("lost"));
            assertTrue(frames.order.startsWith("BTBT"), "a JPEG then its objects: " + frames.order);
            assertEquals(1, JSON.readTree(api.get("/api/v1/engine").body()).get("viewers").asInt());
        } finally {
            ws.sendClose(WebSocket.NORMAL_CLOSURE, "done").get(5, TimeUnit.SECONDS);
        }
        ApiEngine.waitFor(() -> viewers() == 0, Duration.ofSeconds(20), "the viewer's slot freed");
        assertError(api.get("/api/v1/streams/cam/live"), 400, "Upgrade");
    }

    @Test
    void anMjpegViewerGetsMultipartJpegs() throws Exception {
        try (Socket s = new Socket("127.0.0.1", api.base.getPort())) {
            s.setSoTimeout(30_000);
            s.getOutputStream().write("GET /api/v1/streams/cam/live?format=mjpeg&width=32 HTTP/1.1\r\nHost: x\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            InputStream in = s.getInputStream();
            String head = readHead(in);
            assertTrue(head.startsWith("HTTP/1.1 200 OK"), head);
            assertTrue(head.contains("Content-Type: multipart/x-mixed-replace; boundary=" + LiveRoutes.BOUNDARY), head);
            assertTrue(head.contains("Transfer-Encoding: chunked"), head);
            ChunkedReader body = new ChunkedReader(in);
            for (int part = 0; part < 2; part++) {
                String partHead = body.readHead();
                assertTrue(partHead.startsWith("--" + LiveRoutes.BOUNDARY + "\r\nContent-Type: image/jpeg"), partHead);
                int length = Integer.parseInt(partHead.replaceAll("(?s).*Content-Length: (\\d+).*", "$1"));
                byte[] jpeg = body.read(length);
                assertEquals(32, ImageIO.read(new ByteArrayInputStream(jpeg)).getWidth());
                assertEquals("\r\n", new String(body.read(2), StandardCharsets.US_ASCII));
            }
            assertEquals(1, viewers());
        }
        ApiEngine.waitFor(() -> viewers() == 0, Duration.ofSeconds(20), "the MJPEG viewer's slot freed on disconnect");
    }

    @Test
    void viewersOverMaxViewersAreRefused() throws Exception {
        List<WebSocket> open = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                open.add(api.client.newWebSocketBuilder().buildAsync(wsUri("/api/v1/streams/cam/live?width=16"),
                        new WebSocket.Listener() {}).get(30, TimeUnit.SECONDS));
            }
            HttpResponse<String> fourth = api.get("/api/v1/streams/cam/live?format=mjpeg");
            assertError(fourth, 429, "max-viewers");
            var refused = api.client.newWebSocketBuilder().buildAsync(wsUri("/api/v1/streams/cam/live"),
                    new WebSocket.Listener() {});
            var e = org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> refused.get(30, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof java.net.http.WebSocketHandshakeException h
                    && h.getResponse().statusCode() == 429, String.valueOf(e.getCause()));
        } finally {
            for (WebSocket ws : open) {
                ws.abort();
            }
        }
        ApiEngine.waitFor(() -> viewers() == 0, Duration.ofSeconds(20), "slots freed when viewers drop");
    }

    @Test
    void streamsNobodyWatchesAreNotPreviewed() throws Exception {
        ApiEngine.waitFor(() -> viewers() == 0, Duration.ofSeconds(20), "no viewers");
        HttpServer server = api.runtime.httpServer().orElseThrow();
        long made = server.previewsMade();
        long published = api.runtime.engine().stream("cam").orElseThrow().published();
        Thread.sleep(1500);
        assertTrue(api.runtime.engine().stream("cam").orElseThrow().published() > published + 3, "frames go on");
        assertEquals(made, server.previewsMade(), "no preview made for a stream nobody watches");
    }

    @Test
    void probesAndMetricsAnswer() throws Exception {
        HttpResponse<String> live = api.get("/health/live");
        assertEquals(200, live.statusCode(), live.body());
        assertEquals("up", JSON.readTree(live.body()).get("status").asText());
        HttpResponse<String> ready = api.get("/health/ready");
        assertEquals(200, ready.statusCode(), ready.body());
        assertEquals("up", JSON.readTree(ready.body()).get("checks").get("sinks").asText());
        HttpResponse<String> metrics = api.get("/metrics");
        assertEquals(200, metrics.statusCode());
        assertTrue(metrics.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
        assertTrue(metrics.body().contains("samstream_frames_published_total{stream=\"cam\"}"), metrics.body());
        assertFalse(metrics.body().contains(SECRET));
        JsonNode engine = JSON.readTree(api.get("/api/v1/engine").body());
        assertEquals(3, engine.get("http").get("max_viewers").asInt());
        assertFalse(engine.get("http").get("token").asBoolean());
        assertTrue(engine.get("topics").get("prompts").isNull(), "no Kafka: prompts go to the engine itself");
    }

    @Test
    void staticFilesComeFromTheJarOnly() throws Exception {
        HttpResponse<String> index = api.get("/");
        assertEquals(200, index.statusCode());
        assertTrue(index.headers().firstValue("Content-Type").orElse("").startsWith("text/html"));
        assertTrue(index.headers().firstValue("Content-Security-Policy").orElse("").contains("default-src 'self'"));
        assertEquals("nosniff", index.headers().firstValue("X-Content-Type-Options").orElse(""));
        assertEquals(200, api.get("/app.js").statusCode());
        assertEquals(200, api.get("/api/docs/").statusCode());
        assertEquals(200, api.get("/api/docs/swagger-ui-bundle.js").statusCode());
        for (String path : List.of("/../pom.xml", "/%2e%2e/pom.xml", "/..%2fpom.xml", "/api/docs/..%2f..%2fopenapi.json",
                "/api/docs/../../../../etc/passwd", "/etc/passwd", "/samstream/console/index.html",
                "/%2fetc%2fpasswd", "/.%2e/.%2e/pom.xml", "/index.html%00.js")) {
            String status = raw("GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").split("\r\n")[0];
            assertTrue(status.contains(" 404 ") || status.contains(" 400 "), path + " -> " + status);
        }
    }

    @Test
    void otherPathsAndMethodsAreRefusedWithoutCors() throws Exception {
        HttpResponse<String> del = api.send("DELETE", "/api/v1/streams", null);
        assertError(del, 405, "method");
        assertEquals("GET", del.headers().firstValue("Allow").orElse(""));
        assertError(api.send("POST", "/metrics", "{}"), 405, "method");
        assertError(api.get("/api/v1/nothing"), 404, "path");
        HttpResponse<String> options = api.client.send(api.request("/api/v1/streams")
                .method("OPTIONS", java.net.http.HttpRequest.BodyPublishers.noBody())
                .header("Origin", "https://evil.example").header("Access-Control-Request-Method", "PUT").build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(405, options.statusCode());
        HttpResponse<String> cross = api.client.send(api.request("/api/v1/streams").header("Origin", "https://evil.example")
                .build(), HttpResponse.BodyHandlers.ofString());
        assertTrue(cross.headers().firstValue("Access-Control-Allow-Origin").isEmpty(), "no CORS");
    }

    @Test
    void oneClientsIdleSocketsLeaveProbesAndScrapesAnswering() throws Exception {
        // Issue #31 finding 9: 300 idle sockets of one client made scrapes fail. Each connection here holds no thread.
        List<Socket> idle = new ArrayList<>();
        try {
            for (int i = 0; i < 300; i++) {
                Socket s = new Socket("127.0.0.1", api.base.getPort());
                if (i % 30 == 0) { // some send half a request and stop
                    s.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
                }
                idle.add(s);
            }
            for (int i = 0; i < 20; i++) {
                HttpResponse<String> m = api.client.send(api.request("/metrics").timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, m.statusCode());
                assertEquals(200, api.client.send(api.request("/health/live").timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode());
            }
        } finally {
            for (Socket s : idle) {
                s.close();
            }
        }
    }

    // --- helpers

    private int viewers() {
        return api.runtime.httpServer().orElseThrow().viewers();
    }

    private java.util.Set<Integer> objectIds(String stream) {
        try {
            java.util.Set<Integer> ids = new java.util.TreeSet<>();
            JSON.readTree(api.get("/api/v1/streams/" + stream).body()).get("objects")
                    .forEach(o -> ids.add(o.get("id").asInt()));
            return ids;
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private java.net.URI wsUri(String path) {
        return java.net.URI.create("ws://127.0.0.1:" + api.base.getPort() + path);
    }

    private static JsonNode find(JsonNode streams, String id) {
        for (JsonNode s : streams) {
            if (s.get("id").asText().equals(id)) {
                return s;
            }
        }
        throw new AssertionError("no stream " + id + " in " + streams);
    }

    static void assertError(HttpResponse<String> r, int status, String field) throws IOException {
        assertEquals(status, r.statusCode(), r.body());
        JsonNode e = JSON.readTree(r.body());
        assertTrue(e.get("error").isTextual() && !e.get("error").asText().isBlank(), r.body());
        assertEquals(field, e.get("field").asText(), r.body());
    }

    private static void assertRejected(HttpResponse<String> r, int status, String field, String reason) throws IOException {
        assertError(r, status, field);
        assertEquals(reason, JSON.readTree(r.body()).get("reason").asText(), r.body());
    }

    /** One raw request (paths as sent, not normalized by a client); the whole answer. */
    private String raw(String request) throws IOException {
        try (Socket s = new Socket("127.0.0.1", api.base.getPort())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    private static String readHead(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        while (!b.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("the part ended early: " + b);
            }
            b.append((char) c);
        }
        return b.toString();
    }

    /** Reads a chunked body (Transfer-Encoding: chunked) as one stream of bytes. */
    private static final class ChunkedReader {
        private final InputStream in;
        private int left;

        ChunkedReader(InputStream in) {
            this.in = in;
        }

        private int next() throws IOException {
            if (left == 0) {
                String size = line();
                if (size.isEmpty()) {
                    size = line(); // the CRLF after the previous chunk
                }
                left = Integer.parseInt(size.trim(), 16);
                if (left == 0) {
                    return -1;
                }
            }
            left--;
            return in.read();
        }

        private String line() throws IOException {
            StringBuilder b = new StringBuilder();
            for (int c; (c = in.read()) != '\n'; ) {
                if (c < 0) {
                    throw new IOException("the body ended");
                }
                if (c != '\r') {
                    b.append((char) c);
                }
            }
            return b.toString();
        }

        byte[] read(int n) throws IOException {
            byte[] out = new byte[n];
            for (int i = 0; i < n; i++) {
                int c = next();
                if (c < 0) {
                    throw new IOException("the body ended");
                }
                out[i] = (byte) c;
            }
            return out;
        }

        String readHead() throws IOException {
            StringBuilder b = new StringBuilder();
            while (!b.toString().endsWith("\r\n\r\n")) {
                int c = next();
                if (c < 0) {
                    throw new IOException("the body ended: " + b);
                }
                b.append((char) c);
            }
            return b.toString();
        }
    }

    /** Collects a WebSocket's first {@code n} messages (binary as bytes, text as text) and the order they came in. */
    static final class Frames implements WebSocket.Listener {
        final int n;
        final List<byte[]> binary = new ArrayList<>();
        final List<String> text = new ArrayList<>();
        final CompletableFuture<Void> done = new CompletableFuture<>();
        String order = "";
        private java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        private StringBuilder chars = new StringBuilder();

        Frames(int n) {
            this.n = n;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
            byte[] b = new byte[data.remaining()];
            data.get(b);
            bytes.writeBytes(b);
            if (last) {
                binary.add(bytes.toByteArray());
                bytes = new java.io.ByteArrayOutputStream();
                message("B");
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            chars.append(data);
            if (last) {
                text.add(chars.toString());
                chars = new StringBuilder();
                message("T");
            }
            ws.request(1);
            return null;
        }

        private void message(String kind) {
            order += kind;
            if (order.length() >= n) {
                done.complete(null);
            }
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            done.completeExceptionally(error);
        }
    }
}
