package io.samstream.stream.http;

import akka.http.javadsl.model.ContentTypes;
import akka.http.javadsl.model.HttpEntities;
import akka.http.javadsl.model.HttpResponse;
import akka.http.javadsl.model.StatusCodes;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.stream.engine.LogSafe;

/** JSON answers of the API: bodies and the one error shape {@code {"error": "...", "field": "..."}}. */
final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper();
    /** An error text quotes what the client sent: escaped and cut, like a log line. */
    private static final int ERROR_MAX_CHARS = 1000;

    private Json() {}

    static HttpResponse ok(Object body) {
        return response(200, body);
    }

    static HttpResponse response(int status, Object body) {
        try {
            return HttpResponse.create().withStatus(StatusCodes.get(status))
                    .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, MAPPER.writeValueAsBytes(body)));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("an answer could not be written as JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** {@code {"error": error, "field": field}} (field null when no one field is at fault). */
    static HttpResponse error(int status, String error, String field) {
        return error(status, error, field, null);
    }

    /** With {@code "reason"}: a fixed code (a prompt rejection's), when there is one. */
    static HttpResponse error(int status, String error, String field, String reason) {
        ObjectNode o = MAPPER.createObjectNode();
        o.put("error", LogSafe.of(error, ERROR_MAX_CHARS));
        if (field != null) {
            o.put("field", field);
        } else {
            o.putNull("field");
        }
        if (reason != null) {
            o.put("reason", reason);
        }
        return response(status, o);
    }

    static HttpResponse error(ApiException e) {
        return error(e.status(), e.getMessage(), e.field(), e.reason());
    }

    static ObjectNode object() {
        return MAPPER.createObjectNode();
    }
}
