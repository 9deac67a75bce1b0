package io.samstream.config;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The validated {@code samstream.http} section: the engine's one HTTP server (REST API, live previews, web console,
 * health probes and the Prometheus endpoint).
 *
 * @param enabled       off: no server at all (no API, console, health or /metrics)
 * @param host          the address it binds; anything but a loopback address needs {@code token}
 * @param port          0 picks a free port (logged)
 * @param token         the bearer token every API, preview and /metrics call must carry; empty: none (loopback only)
 * @param tls           HTTPS from a PKCS#12 key store; empty: plain HTTP
 * @param maxViewers    live previews open at once (WebSocket, MJPEG and frame.jpg waits together); 0: previews off
 * @param previewFps    frames per second a watched stream's preview is made at, at most
 * @param maxBodyBytes  the largest request body read
 * @param promptRate    prompt calls per second per client address (a burst of as many is allowed)
 */
public record HttpSettings(boolean enabled, String host, int port, Optional<String> token, Optional<Tls> tls,
        int maxViewers, int previewFps, int maxBodyBytes, int promptRate) {

    /** A token goes in an Authorization header, a query parameter and a WebSocket subprotocol: plain characters. */
    public static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9._~+-]{16,512}");

    /** What reference.conf says: on, 127.0.0.1:8080, no token, plain HTTP. */
    public static final HttpSettings DEFAULTS = new HttpSettings(true, "127.0.0.1", 8080, Optional.empty(),
            Optional.empty(), 8, 10, 64 * 1024, 20);

    /** No server. */
    public static final HttpSettings OFF = new HttpSettings(false, "127.0.0.1", 0, Optional.empty(), Optional.empty(),
            8, 10, 64 * 1024, 20);

    /**
     * The key store of {@code samstream.http.tls}.
     *
     * @param keystore a PKCS#12 file holding the server's private key and certificate chain
     * @param password the store's (and its key's) password
     */
    public record Tls(Path keystore, String password) {
        public Tls {
            Objects.requireNonNull(keystore, "keystore");
            Objects.requireNonNull(password, "password");
        }

        @Override
        public String toString() {
            return "Tls[keystore=" + keystore + ", password=***]";
        }
    }

    public HttpSettings {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(tls, "tls");
    }

    /** The same on another port (0: a free one). */
    public HttpSettings withPort(int newPort) {
        return new HttpSettings(enabled, host, newPort, token, tls, maxViewers, previewFps, maxBodyBytes, promptRate);
    }

    /** The same, on or off. */
    public HttpSettings withEnabled(boolean on) {
        return new HttpSettings(on, host, port, token, tls, maxViewers, previewFps, maxBodyBytes, promptRate);
    }

    /**
     * Whether {@code host} is this machine only: {@code localhost}, or an IP literal of the loopback range (127.0.0.0/8,
     * ::1). Names other than localhost are not resolved: they count as open.
     */
    public static boolean isLoopback(String host) {
        String h = host.trim().toLowerCase(Locale.ROOT);
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        if (h.equals("localhost")) {
            return true;
        }
        if (h.matches("127(\\.\\d{1,3}){3}")) {
            for (String part : h.split("\\.")) {
                if (Integer.parseInt(part) > 255) {
                    return false;
                }
            }
            return true;
        }
        return h.equals("::1") || h.equals("0:0:0:0:0:0:0:1");
    }

    /** The token and the key store's password never reach a log line through this record. */
    @Override
    public String toString() {
        return "HttpSettings[enabled=" + enabled + ", host=" + host + ", port=" + port + ", token="
                + (token.isPresent() ? "***" : "none") + ", tls=" + tls.map(Tls::toString).orElse("off")
                + ", maxViewers=" + maxViewers + ", previewFps=" + previewFps + ", maxBodyBytes=" + maxBodyBytes
                + ", promptRate=" + promptRate + "]";
    }
}
