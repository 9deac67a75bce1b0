package io.samstream.stream.http;

import akka.NotUsed;
import akka.http.javadsl.model.ContentType;
import akka.http.javadsl.model.ContentTypes;
import akka.http.javadsl.model.HttpEntities;
import akka.http.javadsl.model.HttpRequest;
import akka.http.javadsl.model.HttpResponse;
import akka.http.javadsl.model.MediaTypes;
import akka.http.javadsl.model.headers.RawHeader;
import akka.http.javadsl.model.ws.BinaryMessage;
import akka.http.javadsl.model.ws.Message;
import akka.http.javadsl.model.ws.TextMessage;
import akka.http.javadsl.model.ws.WebSocketUpgrade;
import akka.stream.Materializer;
import akka.stream.javadsl.Flow;
import akka.stream.javadsl.Sink;
import akka.stream.javadsl.Source;
import akka.util.ByteString;
import io.samstream.stream.engine.Engine;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * The live previews of a stream running on this engine. {@code GET /api/v1/streams/{id}/live} as a WebSocket: per
 * preview frame a binary message (the JPEG) then a text message (its objects as JSON); with {@code ?format=mjpeg} a
 * {@code multipart/x-mixed-replace} response an {@code <img>} shows. {@code GET /api/v1/streams/{id}/frame.jpg}: the
 * latest preview (or the next one, waited for up to {@link #FRAME_WAIT}). {@code ?width=} picks the preview's width
 * (default {@link #DEFAULT_WIDTH}, at most the stream's). Each takes a viewer slot of {@code max-viewers} while open.
 */
final class LiveRoutes {
    static final int DEFAULT_WIDTH = 640;
    static final int MIN_WIDTH = 16;
    static final int MAX_WIDTH = 3840;
    static final Duration FRAME_WAIT = Duration.ofSeconds(5);
    /** A frame.jpg younger than this is answered from the latest preview without waiting for the next. */
    static final Duration FRESH = Duration.ofSeconds(1);
    /** The subprotocol the server answers a WebSocket with (when the client offers it). */
    static final String SUBPROTOCOL = "samstream.v1";
    static final String BOUNDARY = "samstreamframe";
    private static final ContentType MJPEG = ContentTypes.parse("multipart/x-mixed-replace; boundary=" + BOUNDARY);

    private final PreviewHub hub;
    private final Engine engine;
    private final Materializer materializer;

    LiveRoutes(PreviewHub hub, Engine engine, Materializer materializer) {
        this.hub = hub;
        this.engine = engine;
        this.materializer = materializer;
    }

    /** The {@code width} query parameter, or the default. */
    static int width(HttpRequest request) {
        Optional<String> w = request.getUri().query().get("width");
        if (w.isEmpty()) {
            return DEFAULT_WIDTH;
        }
        try {
            int v = Integer.parseInt(w.get().trim());
            if (v >= MIN_WIDTH && v <= MAX_WIDTH) {
                return v;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new ApiException(400, "width must be a whole number of pixels from " + MIN_WIDTH + " to " + MAX_WIDTH
                + ", got '" + w.get() + "'", "width");
    }

    private void requireHere(String id) {
        if (engine.stream(id).isEmpty()) {
            throw new ApiException(404, "no stream '" + id + "' runs on this engine (previews come from the engine"
                    + " that runs the stream)", "id");
        }
    }

    HttpResponse live(HttpRequest request, String id) {
        int width = PreviewHub.width(width(request));
        requireHere(id);
        Optional<String> format = request.getUri().query().get("format");
        Optional<WebSocketUpgrade> upgrade = request.getAttribute(akka.http.javadsl.model.AttributeKeys.webSocketUpgrade);
        boolean mjpeg = format.isPresent() && format.get().equals("mjpeg");
        if (format.isPresent() && !mjpeg) {
            throw new ApiException(400, "format must be mjpeg (or left out for a WebSocket), got '" + format.get() + "'",
                    "format");
        }
        if (!mjpeg && upgrade.isEmpty()) {
            throw new ApiException(400, "this is a WebSocket endpoint; for an <img> ask for ?format=mjpeg",
                    "Upgrade");
        }
        Viewer viewer = new Viewer(id, width);
        hub.open(viewer); // 429 when max-viewers are open
        Source<Preview, NotUsed> frames = viewer.source().watchTermination((m, done) -> {
            done.whenComplete((d, e) -> hub.close(viewer));
            return m;
        });
        if (mjpeg) {
            Source<ByteString, NotUsed> parts = frames.map(LiveRoutes::part);
            return HttpResponse.create().withEntity(HttpEntities.createChunked(MJPEG, parts))
                    .addHeader(RawHeader.create("Cache-Control", "no-store"));
        }
        Source<Message, NotUsed> out = frames.mapConcat(p -> List.of(
                BinaryMessage.create(ByteString.fromArray(p.jpeg())), TextMessage.create(p.objects())));
        // The client has nothing to say: what it sends is read and dropped (a streamed message drained).
        Sink<Message, ?> in = Sink.foreach(m -> {
            if (m.isText() && !m.asTextMessage().isStrict()) {
                m.asTextMessage().getStreamedText().runWith(Sink.ignore(), materializer);
            } else if (!m.isText() && !m.asBinaryMessage().isStrict()) {
                m.asBinaryMessage().getStreamedData().runWith(Sink.ignore(), materializer);
            }
        });
        Flow<Message, Message, NotUsed> flow = Flow.fromSinkAndSourceCoupled(in, out);
        boolean offered = false;
        for (String p : upgrade.get().getRequestedProtocols()) {
            offered |= p.equals(SUBPROTOCOL);
        }
        return offered ? upgrade.get().handleMessagesWith(flow, SUBPROTOCOL) : upgrade.get().handleMessagesWith(flow);
    }

    private static ByteString part(Preview p) {
        String head = "--" + BOUNDARY + "\r\nContent-Type: image/jpeg\r\nContent-Length: " + p.jpeg().length
                + "\r\nX-Samstream-Frame: " + p.frame() + "\r\n\r\n";
        return ByteString.fromString(head, StandardCharsets.US_ASCII).concat(ByteString.fromArray(p.jpeg()))
                .concat(ByteString.fromString("\r\n", StandardCharsets.US_ASCII));
    }

    CompletionStage<HttpResponse> frame(HttpRequest request, String id) {
        int width = PreviewHub.width(width(request));
        requireHere(id);
        Optional<Preview> fresh = hub.latest(id, width, FRESH.toNanos());
        if (fresh.isPresent()) {
            return CompletableFuture.completedFuture(jpeg(fresh.get()));
        }
        Viewer viewer = new Viewer(id, width, 1);
        hub.open(viewer);
        return viewer.source().runWith(Sink.head(), materializer).toCompletableFuture()
                .orTimeout(FRAME_WAIT.toMillis(), TimeUnit.MILLISECONDS)
                .handle((p, e) -> {
                    hub.close(viewer);
                    viewer.complete();
                    if (e != null) {
                        return Json.error(503, "no frame of stream " + id + " was published within "
                                + FRAME_WAIT.toSeconds() + " s", "id");
                    }
                    return jpeg(p);
                });
    }

    private static HttpResponse jpeg(Preview p) {
        return HttpResponse.create()
                .withEntity(HttpEntities.create(ContentTypes.create(MediaTypes.IMAGE_JPEG), p.jpeg()))
                .addHeader(RawHeader.create("Cache-Control", "no-store"))
                .addHeader(RawHeader.create("X-Samstream-Frame", Long.toString(p.frame())));
    }
}
