package io.samstream.stream.engine;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Prometheus scrape endpoint: {@code GET http://host:port/metrics}.
 *
 * <p>A minimal HTTP/1.1 server built so that no client can stall it for others. All socket I/O is
 * non-blocking on one selector thread, so a client that sends nothing, sends its request slowly or
 * never reads its response holds no thread; it must deliver its request headers (at most 8 KiB) within
 * {@link #REQUEST_TIMEOUT} and is closed {@link #DEADLINE} after it connected whatever it is doing.
 * Only the scrape itself runs on a small bounded pool ({@link #THREADS} threads, {@link #QUEUE} waiting;
 * beyond that a request gets 503). At most {@link #MAX_CONNECTIONS} connections are open at once.
 * Every response closes its connection.
 */
public final class MetricsServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MetricsServer.class);

    static final int THREADS = 2;
    static final int QUEUE = 16;
    static final int MAX_CONNECTIONS = 256;
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);
    static final Duration DEADLINE = Duration.ofSeconds(15);
    private static final int MAX_HEADER_BYTES = 8192;
    private static final long TICK_MILLIS = 100; // how often deadlines are swept

    /** One client connection and where it stands. */
    private static final class Connection {
        final SocketChannel channel;
        final long requestBy;
        final long closeBy;
        final ByteBuffer in = ByteBuffer.allocate(MAX_HEADER_BYTES);
        volatile ByteBuffer out;
        SelectionKey key;

        Connection(SocketChannel channel, long now, Duration requestTimeout, Duration deadline) {
            this.channel = channel;
            this.requestBy = now + requestTimeout.toNanos();
            this.closeBy = now + deadline.toNanos();
        }
    }

    private final ServerSocketChannel server;
    private final Selector selector;
    private final Supplier<String> scrape;
    private final Duration requestTimeout;
    private final Duration deadline;
    private final ThreadPoolExecutor workers;
    private final Queue<Connection> responsesReady = new ConcurrentLinkedQueue<>();
    private final Thread io;
    private volatile boolean running = true;

    private MetricsServer(ServerSocketChannel server, Selector selector, Supplier<String> scrape, int threads,
                          Duration requestTimeout, Duration deadline) {
        this.server = server;
        this.selector = selector;
        this.scrape = scrape;
        this.requestTimeout = requestTimeout;
        this.deadline = deadline;
        AtomicInteger n = new AtomicInteger();
        this.workers = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(QUEUE),
                r -> daemon(r, "samstream-metrics-" + n.incrementAndGet()));
        workers.allowCoreThreadTimeOut(true);
        this.io = daemon(this::ioLoop, "samstream-metrics-io");
    }

    public static MetricsServer start(PrometheusMeterRegistry registry, String host, int port) throws IOException {
        return start(registry::scrape, host, port, THREADS, REQUEST_TIMEOUT, DEADLINE);
    }

    /** With a body source and limits of the caller's choice (tests use short timeouts). */
    static MetricsServer start(Supplier<String> scrape, String host, int port, int threads, Duration requestTimeout,
                               Duration deadline) throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open();
        Selector selector = null;
        try {
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(new InetSocketAddress(host, port), 64);
            server.configureBlocking(false);
            selector = Selector.open();
            server.register(selector, SelectionKey.OP_ACCEPT);
        } catch (IOException e) {
            server.close();
            if (selector != null) {
                selector.close();
            }
            throw e;
        }
        MetricsServer s = new MetricsServer(server, selector, scrape, threads, requestTimeout, deadline);
        s.io.start();
        log.info("metrics: http://{}:{}/metrics", host, s.port());
        return s;
    }

    public int port() {
        return server.socket().getLocalPort();
    }

    private void ioLoop() {
        while (running) {
            try {
                selector.select(TICK_MILLIS);
            } catch (IOException e) {
                log.warn("metrics: select failed: {}", e.toString());
                continue;
            }
            if (!running) {
                break;
            }
            for (Connection c; (c = responsesReady.poll()) != null; ) {
                if (c.key.isValid()) {
                    c.key.interestOps(SelectionKey.OP_WRITE);
                }
            }
            for (SelectionKey key : selector.selectedKeys()) {
                try {
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.isAcceptable()) {
                        accept();
                    } else if (key.isReadable()) {
                        read((Connection) key.attachment());
                    } else if (key.isWritable()) {
                        write((Connection) key.attachment());
                    }
                } catch (IOException | RuntimeException e) {
                    log.debug("metrics: connection failed: {}", e.toString());
                    if (key.attachment() instanceof Connection c) {
                        close(c);
                    }
                }
            }
            selector.selectedKeys().clear();
            sweep();
        }
    }

    private void accept() throws IOException {
        for (SocketChannel ch; (ch = server.accept()) != null; ) {
            if (selector.keys().size() > MAX_CONNECTIONS) { // the server's own key counts too
                log.debug("metrics: {} connections open, closing a new one", MAX_CONNECTIONS);
                ch.close();
                continue;
            }
            ch.configureBlocking(false);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            Connection c = new Connection(ch, System.nanoTime(), requestTimeout, deadline);
            c.key = ch.register(selector, SelectionKey.OP_READ, c);
        }
    }

    private void read(Connection c) throws IOException {
        if (c.channel.read(c.in) < 0) {
            close(c);
            return;
        }
        int end = headerEnd(c.in);
        if (end < 0 && c.in.hasRemaining()) {
            return;
        }
        c.key.interestOps(0); // nothing more is read; writing starts when the response is ready
        if (end < 0) {
            respond(c, "431 Request Header Fields Too Large", "", "request headers over 8 KiB\n", true);
            return;
        }
        String head = new String(c.in.array(), 0, end, StandardCharsets.ISO_8859_1);
        int eol = head.indexOf('\n');
        String[] parts = (eol < 0 ? head : head.substring(0, eol)).strip().split(" ");
        if (parts.length != 3 || !parts[2].startsWith("HTTP/")) {
            respond(c, "400 Bad Request", "", "bad request\n", true);
            return;
        }
        String method = parts[0];
        if (!parts[1].split("\\?", 2)[0].equals("/metrics")) {
            respond(c, "404 Not Found", "", "try /metrics\n", true);
        } else if (!method.equals("GET") && !method.equals("HEAD")) {
            respond(c, "405 Method Not Allowed", "Allow: GET, HEAD\r\n", "GET or HEAD\n", true);
        } else {
            try {
                workers.execute(() -> {
                    String body;
                    try {
                        body = scrape.get();
                    } catch (RuntimeException e) {
                        log.warn("metrics: scrape failed: {}", e.toString());
                        respond(c, "500 Internal Server Error", "", "scrape failed\n", true);
                        return;
                    }
                    respond(c, "200 OK", "", body, method.equals("GET"));
                });
            } catch (RejectedExecutionException e) {
                respond(c, "503 Service Unavailable", "", "busy\n", true);
            }
        }
    }

    /** Queues a whole response for the I/O thread; {@code extraHeaders} are "Name: value\r\n" lines. */
    private void respond(Connection c, String status, String extraHeaders, String body, boolean withBody) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        String type = status.startsWith("200") ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8";
        byte[] head = ("HTTP/1.1 " + status + "\r\nContent-Type: " + type + "\r\nContent-Length: " + bytes.length
                + "\r\n" + extraHeaders + "Connection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
        ByteBuffer out = ByteBuffer.allocate(head.length + (withBody ? bytes.length : 0)).put(head);
        if (withBody) {
            out.put(bytes);
        }
        c.out = out.flip();
        responsesReady.add(c);
        selector.wakeup();
    }

    private void write(Connection c) throws IOException {
        c.channel.write(c.out);
        if (!c.out.hasRemaining()) {
            close(c);
        }
    }

    /** Closes connections past their deadline: no complete request in time, or not done in time. */
    private void sweep() {
        long now = System.nanoTime();
        for (SelectionKey key : selector.keys()) {
            if (key.isValid() && key.attachment() instanceof Connection c
                    && (now - c.closeBy > 0 || (key.interestOps() == SelectionKey.OP_READ && now - c.requestBy > 0))) {
                log.debug("metrics: closing {} at its deadline", remote(c));
                close(c);
            }
        }
    }

    /** Where the request headers end ("\r\n\r\n" or "\n\n"), or -1. */
    private static int headerEnd(ByteBuffer in) {
        byte[] b = in.array();
        for (int i = 1; i < in.position(); i++) {
            if (b[i] == '\n' && (b[i - 1] == '\n' || (i >= 3 && b[i - 1] == '\r' && b[i - 2] == '\n' && b[i - 3] == '\r'))) {
                return i + 1;
            }
        }
        return -1;
    }

    private static String remote(Connection c) {
        try {
            return String.valueOf(c.channel.getRemoteAddress());
        } catch (IOException e) {
            return "a client";
        }
    }

    private static void close(Connection c) {
        if (c.key != null) {
            c.key.cancel();
        }
        try {
            c.channel.close();
        } catch (IOException e) {
            log.debug("metrics: closing a connection: {}", e.toString());
        }
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    @Override
    public void close() {
        running = false;
        selector.wakeup();
        try {
            io.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        workers.shutdownNow();
        for (SelectionKey key : selector.keys()) {
            if (key.attachment() instanceof Connection c) {
                close(c);
            }
        }
        try {
            selector.close();
            server.close();
        } catch (IOException e) {
            log.debug("metrics: closing the server: {}", e.toString());
        }
    }
}
