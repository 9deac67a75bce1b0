package io.samstream.stream.http;

import akka.http.javadsl.ConnectionContext;
import akka.http.javadsl.Http;
import akka.http.javadsl.ServerBinding;
import akka.http.javadsl.ServerBuilder;
import akka.http.javadsl.model.AttributeKeys;
import akka.http.javadsl.model.ContentTypes;
import akka.http.javadsl.model.HttpEntities;
import akka.http.javadsl.model.HttpEntity;
import akka.http.javadsl.model.HttpRequest;
import akka.http.javadsl.model.HttpResponse;
import akka.http.javadsl.model.MediaTypes;
import akka.http.javadsl.model.headers.RawHeader;
import akka.http.javadsl.settings.ServerSettings;
import akka.stream.Materializer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.ConfigFactory;
import io.samstream.config.HttpSettings;
import io.samstream.config.StreamDefaults;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.stream.engine.ClusterMember;
import io.samstream.stream.engine.Engine;
import io.samstream.stream.engine.LogSafe;
import io.samstream.stream.engine.PromptMessage;
import io.samstream.stream.engine.PromptRejected;
import io.samstream.stream.engine.PromptsTopicWatcher;
import io.samstream.stream.engine.StreamDirectory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's one HTTP server ({@code samstream.http}), on Akka HTTP and the engine's actor system: the REST API
 * ({@link Routes}), live previews ({@link LiveRoutes}), the probes ({@link Health}), {@code /metrics}, the console and
 * Swagger UI ({@link StaticFiles}).
 *
 * <p>Bounded so that no client can take it from others: at most {@link #MAX_CONNECTIONS} connections (one client's 300
 * idle sockets leave the probes and scrapes answering; an idle connection costs no thread), a connection idle for
 * {@link #IDLE_TIMEOUT} is closed, a request gets {@link #REQUEST_TIMEOUT} to be answered, bodies over
 * {@code max-body} get 413, previews over {@code max-viewers} and prompts over {@code prompt-rate} get 429. Blocking
 * work (Kafka sends, the scrape) runs on a small pool of its own ({@link #WORK_THREADS} threads, {@link #WORK_QUEUE}
 * waiting; beyond that 503), never on the actor system's threads. No CORS headers: a page of another origin cannot
 * call the API; a call that changes something needs a JSON body (a plain form cannot send one) and, with a token, the
 * Authorization header (there is no cookie to ride on).
 */
public final class HttpServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HttpServer.class);
    static final int MAX_CONNECTIONS = 1024;
    static final Duration IDLE_TIMEOUT = Duration.ofSeconds(60);
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(20);
    static final int WORK_THREADS = 2;
    static final int WORK_QUEUE = 64;
    private static final Duration BODY_WAIT = Duration.ofSeconds(10);
    private static final String OPENAPI_RESOURCE = "samstream/openapi.json";

    /**
     * What the server serves.
     *
     * @param settings      {@code samstream.http}
     * @param engine        the engine (its actor system runs the server)
     * @param scrape        the Prometheus text; empty when {@code samstream.metrics.enabled} is off
     * @param defaults      what stream definitions leave out
     * @param kafka         the engine's Kafka clients; empty without Kafka
     * @param streamsTopic  the streams topic; empty: streams are added and removed on this engine
     * @param promptsTopic  the prompts topic
     * @param promptsViaTopic whether prompts go through the prompts topic (some part of the engine follows it)
     * @param cluster       {@code samstream.cluster.enabled}, and then this engine's name
     * @param partitions    the partitions the streams and state topics are made with (cluster)
     * @param stateTopic    the cluster's state topic (which engine runs a stream); empty when not clustered
     * @param outputFolders the file sinks' folders (readiness: writable)
     * @param model         the model's name; {@code backend} what it runs on
     */
    public record Parts(HttpSettings settings, Engine engine, Optional<Supplier<String>> scrape, StreamDefaults defaults,
            Optional<KafkaClients> kafka, Optional<String> streamsTopic, String promptsTopic, boolean promptsViaTopic,
            Optional<String> cluster, int partitions, Optional<String> stateTopic, List<Path> outputFolders,
            String model, String backend) {}

    private final Parts parts;
    private final Engine engine;
    private final Materializer materializer;
    private final BearerAuth auth;
    private final RateLimiter prompts;
    private final StaticFiles files = new StaticFiles();
    private final PreviewHub hub;
    private final LiveRoutes live;
    private final Health health;
    private final SinkProbe sinks;
    private final StreamViews views;
    private final StreamEditor editor;
    private final PromptRelay relay;
    private final PromptOutcomes outcomes = new PromptOutcomes();
    private final Optional<TopicWriter> writer;
    private final Optional<StreamDirectory> directory;
    private final ThreadPoolExecutor work;
    private final AtomicReference<ClusterMember> member = new AtomicReference<>();
    private volatile boolean started;
    private final ServerBinding binding;
    private final String url;

    private HttpServer(Parts p) throws IOException {
        this.parts = p;
        this.engine = p.engine();
        this.materializer = Materializer.matFromSystem(engine.system());
        this.auth = new BearerAuth(p.settings().token());
        this.prompts = new RateLimiter(p.settings().promptRate());
        AtomicInteger n = new AtomicInteger();
        this.work = new ThreadPoolExecutor(WORK_THREADS, WORK_THREADS, 30, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(WORK_QUEUE), r -> {
                    Thread t = new Thread(r, "samstream-http-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        work.allowCoreThreadTimeOut(true);
        StreamFigures figures = new StreamFigures();
        this.hub = new PreviewHub(p.settings().maxViewers(), p.settings().previewFps(), figures, engine::stream);
        this.live = new LiveRoutes(hub, engine, materializer);
        this.sinks = new SinkProbe(p.kafka().orElse(null), p.outputFolders());
        this.health = new Health(engine, () -> started, sinks, p.cluster().isPresent(),
                () -> Optional.ofNullable(member.get()));
        this.writer = p.kafka().map(TopicWriter::new);
        this.directory = p.kafka().isPresent() && p.streamsTopic().isPresent()
                ? Optional.of(StreamDirectory.start(p.kafka().get(), p.streamsTopic().get(), p.stateTopic(),
                        p.cluster().isPresent() ? p.partitions() : 1))
                : Optional.empty();
        this.views = new StreamViews(engine, figures, directory, p.cluster(), p.defaults());
        this.editor = new StreamEditor(engine, p.defaults(), writer, p.streamsTopic(), directory, work, views);
        this.relay = new PromptRelay(engine, p.promptsViaTopic() ? writer : Optional.empty(), p.promptsTopic(), outcomes,
                work, p.cluster().isPresent());
        engine.setFrameTap(hub);
        ServerBuilder builder = Http.get(engine.system()).newServerAt(p.settings().host(), p.settings().port())
                .withSettings(serverSettings());
        if (p.settings().tls().isPresent()) {
            builder = builder.enableHttps(ConnectionContext.httpsServer(sslContext(p.settings().tls().get())));
        }
        try {
            this.binding = builder.bind(this::handle).toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            Throwable c = e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e;
            throw new IOException("samstream.http: cannot listen on " + p.settings().host() + ":" + p.settings().port()
                    + ": " + c.getMessage(), c);
        }
        String scheme = p.settings().tls().isPresent() ? "https" : "http";
        String host = p.settings().host().contains(":") && !p.settings().host().startsWith("[")
                ? "[" + p.settings().host() + "]" : p.settings().host();
        this.url = scheme + "://" + host + ":" + port() + "/";
    }

    /**
     * Starts serving; the engine's published frames feed the live figures and previews from now on.
     *
     * @throws IOException when the address cannot be bound or the key store not read
     */
    public static HttpServer start(Parts parts) throws IOException {
        HttpServer s = null;
        try {
            s = new HttpServer(parts);
        } catch (IOException | RuntimeException e) {
            parts.engine().setFrameTap(io.samstream.stream.engine.FrameTap.NONE);
            throw e;
        }
        log.info("http: {} (console), {}api/v1 (API; OpenAPI at {}api/v1/openapi.json, Swagger UI at {}api/docs),"
                + " {}health/live, {}health/ready{}{}", s.url, s.url, s.url, s.url, s.url, s.url,
                parts.scrape().isPresent() ? ", " + s.url + "metrics" : "",
                parts.settings().token().isPresent() ? "; every call but the probes needs the bearer token" : "");
        return s;
    }

    private ServerSettings serverSettings() {
        return ServerSettings.create(ConfigFactory.parseString("""
                akka.http.server {
                  idle-timeout = %d s
                  request-timeout = %d s
                  bind-timeout = 10 s
                  linger-timeout = 5 s
                  max-connections = %d
                  remote-address-attribute = on
                  server-header = ""
                  websocket.periodic-keep-alive-max-idle = 20 s
                  parsing.max-content-length = 16m
                  parsing.max-uri-length = 8k
                  # A malformed request is answered (400 and why), not logged: no client can flood the log.
                  parsing.error-logging-verbosity = off
                  parsing.illegal-header-warnings = off
                }
                """.formatted(IDLE_TIMEOUT.toSeconds(), REQUEST_TIMEOUT.toSeconds(), MAX_CONNECTIONS))
                .withFallback(engine.system().settings().config()));
    }

    static SSLContext sslContext(HttpSettings.Tls tls) throws IOException {
        try (InputStream in = Files.newInputStream(tls.keystore())) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, tls.password().toCharArray());
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, tls.password().toCharArray());
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), null, null);
            return ctx;
        } catch (GeneralSecurityException | IOException e) {
            throw new IOException("samstream.http.tls.keystore: " + tls.keystore() + " is not a PKCS#12 key store this"
                    + " password opens (" + e.getMessage() + ")", e);
        }
    }

    /** The port it listens on (the one picked when the configuration said 0). */
    public int port() {
        return binding.localAddress().getPort();
    }

    /** Where the console is, e.g. {@code http://127.0.0.1:8080/}. */
    public String url() {
        return url;
    }

    /** The engine finished starting: {@code /health/ready} may say so from now on. */
    public void started() {
        this.started = true;
    }

    /** The prompts topic's watcher (this engine's, not clustered): its outcomes answer relayed prompts. */
    public void followPrompts(PromptsTopicWatcher watcher) {
        watcher.setOutcomes(outcomes);
    }

    /** This engine's cluster membership: readiness follows it, its prompts' outcomes answer relayed prompts. */
    public void followCluster(ClusterMember m) {
        member.set(m);
        m.prompts().setOutcomes(outcomes);
    }

    /** Live previews open now (benchmarks). */
    public int viewers() {
        return hub.viewers();
    }

    /** Previews made so far (tests: none for streams nobody watches). */
    long previewsMade() {
        return hub.made();
    }

    /** Every request: security headers on the answer, any failure as a JSON error. */
    private CompletionStage<HttpResponse> handle(HttpRequest request) {
        CompletionStage<HttpResponse> answer;
        try {
            answer = route(request);
        } catch (ApiException e) {
            answer = CompletableFuture.completedFuture(Json.error(e));
        } catch (RuntimeException e) {
            answer = CompletableFuture.completedFuture(internal(request, e));
        }
        return answer.exceptionally(e -> {
            Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            return c instanceof ApiException a ? Json.error(a) : internal(request, c);
        }).thenApply(HttpServer::secured);
    }

    private static HttpResponse internal(HttpRequest request, Throwable e) {
        log.warn("http: {} {} failed: {}", request.method().value(), LogSafe.of(request.getUri().path()), e.toString());
        return Json.error(500, "the server failed answering: " + e.getMessage(), null);
    }

    private static HttpResponse secured(HttpResponse r) {
        if (r.status().intValue() == 101) {
            return r;
        }
        HttpResponse s = r.addHeader(RawHeader.create("X-Content-Type-Options", "nosniff"))
                .addHeader(RawHeader.create("X-Frame-Options", "DENY"))
                .addHeader(RawHeader.create("Referrer-Policy", "no-referrer"));
        return r.getHeader("Cache-Control").isPresent() ? s : s.addHeader(RawHeader.create("Cache-Control", "no-store"));
    }

    private CompletionStage<HttpResponse> route(HttpRequest request) {
        String method = request.method().value();
        String path = request.getUri().path();
        if (!method.equals("PUT") && !method.equals("POST")) {
            request.discardEntityBytes(materializer); // a body nobody reads must not stall the connection
        }
        Optional<Routes.Match> match = Routes.find(method.equals("HEAD") ? "GET" : method, path);
        if (match.isEmpty()) {
            if (method.equals("PUT") || method.equals("POST")) {
                request.discardEntityBytes(materializer);
            }
            return done(unrouted(request, method, path));
        }
        Routes.Route r = match.get().route();
        if (r.access() != Routes.Access.PUBLIC && !auth.allows(request, r.access() == Routes.Access.TOKEN_OR_QUERY)) {
            if (method.equals("PUT") || method.equals("POST")) {
                request.discardEntityBytes(materializer);
            }
            return done(BearerAuth.unauthorized(r.access() == Routes.Access.TOKEN_OR_QUERY));
        }
        String id = match.get().id();
        if (!id.isEmpty() && !StreamSpec.ID.matcher(id).matches()) {
            throw new ApiException(400, "'" + id + "' is not a stream id (1-128 of A-Z a-z 0-9 . _ - starting with a"
                    + " letter or digit)", "id");
        }
        if (r == Routes.LIVE) {
            return health.live();
        } else if (r == Routes.READY) {
            return health.ready();
        } else if (r == Routes.METRICS) {
            return metrics();
        } else if (r == Routes.OPENAPI) {
            return done(openApi());
        } else if (r == Routes.ENGINE) {
            return done(Json.ok(engineInfo()));
        } else if (r == Routes.STREAMS) {
            ObjectNode o = Json.object();
            o.set("streams", views.all());
            return done(Json.ok(o));
        } else if (r == Routes.STREAM) {
            return done(views.stream(id).map(Json::ok)
                    .orElseGet(() -> Json.error(404, "no stream '" + id + "' runs here or is defined", "id")));
        } else if (r == Routes.PUT_STREAM) {
            return body(request).thenCompose(json -> editor.put(id, json));
        } else if (r == Routes.DELETE_STREAM) {
            return editor.delete(id);
        } else if (r == Routes.PROMPTS) {
            return prompt(request, id);
        } else if (r == Routes.FRAME) {
            return live.frame(request, id);
        } else if (r == Routes.PREVIEW) {
            return done(live.live(request, id));
        }
        throw new IllegalStateException("route " + r + " has no handler");
    }

    /** Not a route: a static file, a 405 with the methods the path has, or a 404. */
    private HttpResponse unrouted(HttpRequest request, String method, String path) {
        List<String> allowed = Routes.methods(path);
        if (!allowed.isEmpty()) {
            return Json.error(405, method + " is not allowed here; " + String.join(", ", allowed) + " is", "method")
                    .addHeader(RawHeader.create("Allow", String.join(", ", allowed)));
        }
        boolean get = method.equals("GET") || method.equals("HEAD");
        if (get && (path.equals("/api/docs") || path.startsWith("/api/docs/"))) {
            return path.equals("/api/docs") ? redirect("/api/docs/") : files.apiDocs(path.substring("/api/docs/".length()));
        }
        if (path.startsWith("/api/") || path.equals("/api")) {
            return Json.error(404, "no such API path: " + path + " (see /api/v1/openapi.json)", "path");
        }
        if (get && path.startsWith("/") && path.indexOf('/', 1) < 0) {
            return files.console(path.substring(1));
        }
        return Json.error(get ? 404 : 405, get ? "no such file" : method + " is not allowed here", "path");
    }

    private static HttpResponse redirect(String to) {
        return HttpResponse.create().withStatus(308).addHeader(RawHeader.create("Location", to));
    }

    private CompletionStage<HttpResponse> metrics() {
        if (parts.scrape().isEmpty()) {
            return done(Json.error(404, "metrics are off (samstream.metrics.enabled = off)", "metrics"));
        }
        return CompletableFuture.supplyAsync(() -> HttpResponse.create().withEntity(HttpEntities.create(
                ContentTypes.parse("text/plain; version=0.0.4; charset=utf-8"),
                parts.scrape().get().get().getBytes(StandardCharsets.UTF_8))), work)
                .exceptionally(e -> Json.error(503, "the server is busy: try the scrape again", null));
    }

    private HttpResponse openApi() {
        try (InputStream in = HttpServer.class.getClassLoader().getResourceAsStream(OPENAPI_RESOURCE)) {
            if (in == null) {
                return Json.error(500, "the OpenAPI document is missing from the jar", null);
            }
            return HttpResponse.create().withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, in.readAllBytes()));
        } catch (IOException e) {
            return Json.error(500, "reading the OpenAPI document: " + e.getMessage(), null);
        }
    }

    private ObjectNode engineInfo() {
        ObjectNode o = Json.object();
        o.put("model", parts.model()).put("backend", parts.backend());
        parts.cluster().ifPresentOrElse(c -> o.put("engine", c), () -> o.putNull("engine"));
        o.put("clustered", parts.cluster().isPresent());
        ObjectNode topics = o.putObject("topics");
        parts.streamsTopic().ifPresentOrElse(t -> topics.put("streams", t), () -> topics.putNull("streams"));
        if (parts.promptsViaTopic()) {
            topics.put("prompts", parts.promptsTopic());
        } else {
            topics.putNull("prompts");
        }
        ObjectNode h = o.putObject("http");
        h.put("token", auth.required()).put("max_viewers", parts.settings().maxViewers())
                .put("preview_fps", parts.settings().previewFps()).put("max_body", parts.settings().maxBodyBytes())
                .put("prompt_rate", parts.settings().promptRate()).put("metrics", parts.scrape().isPresent());
        o.put("viewers", hub.viewers());
        return o;
    }

    private CompletionStage<HttpResponse> prompt(HttpRequest request, String id) {
        String client = request.getAttribute(AttributeKeys.remoteAddress).flatMap(a -> a.getAddress())
                .map(a -> a.getHostAddress()).orElse("unknown");
        if (!prompts.tryAcquire(client)) {
            request.discardEntityBytes(materializer);
            throw new ApiException(429, "more than " + parts.settings().promptRate() + " prompt calls a second from "
                    + client + " (samstream.http.prompt-rate)", "prompt-rate");
        }
        return body(request).thenCompose(text -> {
            String value = withStream(text, id);
            PromptMessage m;
            try {
                m = PromptMessage.parse(id, value);
            } catch (PromptRejected e) {
                return done(PromptRelay.rejected(e));
            }
            return relay.send(m, value, views.known(id));
        });
    }

    /** The message as the topic carries it: a JSON object without "stream" gets the path's. */
    static String withStream(String text, String id) {
        try {
            JsonNode n = Json.MAPPER.readTree(text);
            if (n instanceof ObjectNode o && !o.has("stream")) {
                o.put("stream", id);
                return o.toString();
            }
        } catch (IOException e) {
            // Not JSON: PromptMessage.parse says so.
        }
        return text;
    }

    /** A PUT's or POST's JSON body, at most {@code max-body} bytes. */
    private CompletionStage<String> body(HttpRequest request) {
        HttpEntity entity = request.entity();
        int max = parts.settings().maxBodyBytes();
        if (!entity.getContentType().mediaType().equals(MediaTypes.APPLICATION_JSON)) {
            request.discardEntityBytes(materializer);
            throw new ApiException(415, "the body must be JSON (Content-Type: application/json), got "
                    + entity.getContentType(), "Content-Type");
        }
        if (entity.getContentLengthOption().isPresent() && entity.getContentLengthOption().getAsLong() > max) {
            request.discardEntityBytes(materializer);
            throw tooLarge(max);
        }
        return entity.toStrict(BODY_WAIT.toMillis(), max, materializer).handle((strict, e) -> {
            if (e != null) {
                Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                if (c.getClass().getSimpleName().contains("EntityStreamSizeException")) {
                    throw tooLarge(max);
                }
                throw new ApiException(400, "the body could not be read: " + c.getMessage(), "body");
            }
            return strict.getData().decodeString(StandardCharsets.UTF_8);
        });
    }

    private static ApiException tooLarge(int max) {
        return new ApiException(413, "the body is larger than " + max + " bytes (samstream.http.max-body)", "max-body");
    }

    private static CompletionStage<HttpResponse> done(HttpResponse r) {
        return CompletableFuture.completedFuture(r);
    }

    /** Stops listening (open connections get a few seconds), the previews and the topic clients. */
    @Override
    public void close() {
        engine.setFrameTap(io.samstream.stream.engine.FrameTap.NONE);
        try {
            binding.terminate(Duration.ofSeconds(3)).toCompletableFuture().get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            log.debug("http: stopping: {}", e.toString());
        }
        hub.close();
        sinks.close();
        directory.ifPresent(StreamDirectory::close);
        writer.ifPresent(TopicWriter::close);
        work.shutdownNow();
    }
}
