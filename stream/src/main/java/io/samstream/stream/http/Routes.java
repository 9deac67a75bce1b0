package io.samstream.stream.http;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The server's routes: method, path template and who may call it. One table, which the server dispatches by and a
 * test holds the OpenAPI document against (so the two cannot drift apart). Static files (the console at {@code /},
 * Swagger UI at {@code /api/docs}) are not routes: they are public and hold no data.
 */
final class Routes {
    /** Who may call a route. */
    enum Access {
        /** Anyone (the probes). */
        PUBLIC,
        /** The bearer token, in the Authorization header. */
        TOKEN,
        /** The token, in the header or (a browser's WebSocket and img) the access_token query parameter or subprotocol. */
        TOKEN_OR_QUERY
    }

    /** One route: {@code template}'s {@code {id}} segment is a stream id. */
    record Route(String method, String template, Access access) {
        /** The path parameter's value when {@code path} is this route's, else empty. */
        Optional<String> match(String path) {
            String[] t = template.split("/", -1);
            String[] p = path.split("/", -1);
            if (t.length != p.length) {
                return Optional.empty();
            }
            String id = "";
            for (int i = 0; i < t.length; i++) {
                if (t[i].equals("{id}")) {
                    if (p[i].isEmpty()) {
                        return Optional.empty();
                    }
                    id = p[i];
                } else if (!t[i].equals(p[i])) {
                    return Optional.empty();
                }
            }
            return Optional.of(id);
        }
    }

    static final Route LIVE = new Route("GET", "/health/live", Access.PUBLIC);
    static final Route READY = new Route("GET", "/health/ready", Access.PUBLIC);
    static final Route METRICS = new Route("GET", "/metrics", Access.TOKEN);
    static final Route OPENAPI = new Route("GET", "/api/v1/openapi.json", Access.TOKEN);
    static final Route ENGINE = new Route("GET", "/api/v1/engine", Access.TOKEN);
    static final Route STREAMS = new Route("GET", "/api/v1/streams", Access.TOKEN);
    static final Route STREAM = new Route("GET", "/api/v1/streams/{id}", Access.TOKEN);
    static final Route PUT_STREAM = new Route("PUT", "/api/v1/streams/{id}", Access.TOKEN);
    static final Route DELETE_STREAM = new Route("DELETE", "/api/v1/streams/{id}", Access.TOKEN);
    static final Route PROMPTS = new Route("POST", "/api/v1/streams/{id}/prompts", Access.TOKEN);
    static final Route FRAME = new Route("GET", "/api/v1/streams/{id}/frame.jpg", Access.TOKEN_OR_QUERY);
    static final Route PREVIEW = new Route("GET", "/api/v1/streams/{id}/live", Access.TOKEN_OR_QUERY);

    static final List<Route> ALL = List.of(LIVE, READY, METRICS, OPENAPI, ENGINE, STREAMS, STREAM, PUT_STREAM,
            DELETE_STREAM, PROMPTS, FRAME, PREVIEW);

    private Routes() {}

    /** A request's route and path parameter. */
    record Match(Route route, String id) {}

    /** The route of {@code method} and {@code path}, if any. */
    static Optional<Match> find(String method, String path) {
        for (Route r : ALL) {
            if (r.method().equals(method)) {
                Optional<String> id = r.match(path);
                if (id.isPresent()) {
                    return Optional.of(new Match(r, id.get()));
                }
            }
        }
        return Optional.empty();
    }

    /** The methods {@code path} has routes for (405's Allow header); empty when it has none. */
    static List<String> methods(String path) {
        List<String> out = new ArrayList<>();
        for (Route r : ALL) {
            if (r.match(path).isPresent() && !out.contains(r.method())) {
                out.add(r.method());
            }
        }
        return out;
    }
}
