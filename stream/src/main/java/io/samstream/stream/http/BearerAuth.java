package io.samstream.stream.http;

import akka.http.javadsl.model.HttpRequest;
import akka.http.javadsl.model.HttpResponse;
import akka.http.javadsl.model.headers.RawHeader;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Locale;
import java.util.Optional;

/**
 * The bearer token check ({@code samstream.http.token}). A request carries the token in its
 * {@code Authorization: Bearer <token>} header; a browser's WebSocket (which cannot set headers) may offer it as the
 * subprotocol {@code bearer.<token>}, and a live preview's {@code <img>} or WebSocket URL as the query parameter
 * {@code access_token} (the two preview routes only, so the token shows up in fewer URLs). The comparison hashes
 * both sides first and compares the digests in constant time, so neither the token's bytes nor its length leak
 * through timing. Without a configured token every request passes (the server then listens on loopback only).
 */
final class BearerAuth {
    /** The query parameter a preview URL may carry the token in (RFC 6750's name). */
    static final String QUERY_PARAMETER = "access_token";
    /** The WebSocket subprotocol prefix that carries the token. */
    static final String SUBPROTOCOL_PREFIX = "bearer.";

    private final byte[] digest;

    BearerAuth(Optional<String> token) {
        this.digest = token.map(BearerAuth::sha256).orElse(null);
    }

    boolean required() {
        return digest != null;
    }

    /**
     * Whether {@code request} carries the token (always true without one).
     *
     * @param queryAllowed whether the {@code access_token} query parameter counts (preview routes)
     */
    boolean allows(HttpRequest request, boolean queryAllowed) {
        if (digest == null) {
            return true;
        }
        Optional<String> header = request.getHeader("Authorization").map(h -> h.value());
        if (header.isPresent()) {
            String v = header.get().trim();
            if (v.length() > 7 && v.substring(0, 7).toLowerCase(Locale.ROOT).equals("bearer ")) {
                return matches(v.substring(7).trim());
            }
            return false;
        }
        if (queryAllowed) {
            Optional<String> q = request.getUri().query().get(QUERY_PARAMETER);
            if (q.isPresent()) {
                return matches(q.get());
            }
            for (String p : webSocketProtocols(request)) {
                if (p.startsWith(SUBPROTOCOL_PREFIX)) {
                    return matches(p.substring(SUBPROTOCOL_PREFIX.length()));
                }
            }
        }
        return false;
    }

    /** The subprotocols a WebSocket upgrade offers ({@code Sec-WebSocket-Protocol}); none for other requests. */
    static java.util.List<String> webSocketProtocols(HttpRequest request) {
        java.util.List<String> out = new java.util.ArrayList<>();
        request.getAttribute(akka.http.javadsl.model.AttributeKeys.webSocketUpgrade)
                .ifPresent(u -> u.getRequestedProtocols().forEach(out::add));
        return out;
    }

    boolean matches(String given) {
        return MessageDigest.isEqual(digest, sha256(given));
    }

    /** The 401 answer: what is missing, and how a client gives it. */
    static HttpResponse unauthorized(boolean queryAllowed) {
        return Json.error(401, "this server needs a bearer token: the header 'Authorization: Bearer <token>'"
                + (queryAllowed ? " (or, for a preview, the query parameter " + QUERY_PARAMETER
                        + " or the WebSocket subprotocol " + SUBPROTOCOL_PREFIX + "<token>)" : ""), "Authorization")
                .addHeader(RawHeader.create("WWW-Authenticate", "Bearer realm=\"samstream\""));
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this JVM", e);
        }
    }
}
