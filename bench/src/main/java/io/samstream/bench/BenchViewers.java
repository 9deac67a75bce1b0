package io.samstream.bench;

import io.samstream.config.HttpSettings;
import io.samstream.config.PromptSpec;
import io.samstream.config.StreamDefaults;
import io.samstream.config.StreamSpec;
import io.samstream.stream.engine.Engine;
import io.samstream.stream.http.HttpServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code StreamBench --viewers N}: the engine's HTTP server on a benchmark's engine and N live-preview viewers (the
 * console's WebSocket: a JPEG and its objects per frame), one per stream, each counting the frames it receives. What
 * watching costs the engine (its frames/s and latency next to a row without viewers) and what the viewers get.
 */
final class BenchViewers implements AutoCloseable {
    /** A viewer's preview width: the console's. */
    static final int WIDTH = 640;
    static final int PREVIEW_FPS = 10;

    private final HttpServer server;
    private final List<Viewer> viewers = new ArrayList<>();

    /** One WebSocket viewer: frames and bytes received, first and last arrival. */
    private static final class Viewer implements WebSocket.Listener {
        final AtomicLong frames = new AtomicLong();
        final AtomicLong bytes = new AtomicLong();
        volatile long first;
        volatile long last;
        WebSocket socket;

        @Override
        public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean lastPart) {
            bytes.addAndGet(data.remaining());
            if (lastPart) {
                long now = System.nanoTime();
                if (frames.getAndIncrement() == 0) {
                    first = now;
                }
                last = now;
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean lastPart) {
            ws.request(1);
            return null;
        }
    }

    private BenchViewers(HttpServer server) {
        this.server = server;
    }

    /** The HTTP server on {@code engine} (127.0.0.1, a free port, room for {@code viewers}), with no viewer yet. */
    static BenchViewers start(Engine engine, int viewers, String backend) throws IOException {
        HttpSettings http = new HttpSettings(true, "127.0.0.1", 0, Optional.empty(), Optional.empty(),
                Math.max(1, viewers), PREVIEW_FPS, 64 * 1024, 20);
        StreamDefaults defaults = new StreamDefaults(StreamSpec.Live.AUTO, StreamSpec.Decoder.AUTO,
                new PromptSpec(List.of(), 0));
        return new BenchViewers(HttpServer.start(new HttpServer.Parts(http, engine, Optional.empty(), defaults,
                Optional.empty(), Optional.empty(), "samstream.prompts", false, Optional.empty(), 1, Optional.empty(),
                List.of(), "bench", backend)));
    }

    /** A viewer of stream {@code id} (running already). */
    void watch(String id) throws Exception {
        Viewer v = new Viewer();
        v.socket = HttpClient.newHttpClient().newWebSocketBuilder().subprotocols("samstream.v1")
                .buildAsync(URI.create(server.url().replaceFirst("^http", "ws") + "api/v1/streams/" + id + "/live?width="
                        + WIDTH), v).get(30, TimeUnit.SECONDS);
        viewers.add(v);
    }

    /** Frames per second each viewer received while it was receiving (mean over the viewers), and in all. */
    String describe() {
        if (viewers.isEmpty()) {
            return "- | - |";
        }
        double sum = 0;
        long frames = 0;
        long bytes = 0;
        for (Viewer v : viewers) {
            long n = v.frames.get();
            frames += n;
            bytes += v.bytes.get();
            sum += n < 2 ? 0 : (n - 1) / ((v.last - v.first) / 1e9);
        }
        return String.format(Locale.ROOT, "%.1f | %d frames, %.0f KiB each |", sum / viewers.size(), frames,
                frames == 0 ? 0 : bytes / 1024.0 / frames);
    }

    @Override
    public void close() {
        for (Viewer v : viewers) {
            v.socket.abort();
        }
        server.close();
    }
}
