package io.samstream.stream.http;

/**
 * A request the API refuses: its HTTP status, what was wrong in words, and the field (or query parameter, header,
 * limit) at fault; answered as {@code {"error": "...", "field": "..."}}.
 */
final class ApiException extends RuntimeException {
    private final int status;
    private final String field;
    private final String reason;

    ApiException(int status, String error, String field) {
        this(status, error, field, null);
    }

    /** @param reason a short fixed code (a prompt rejection's reason), or null */
    ApiException(int status, String error, String field, String reason) {
        super(error, null, false, false);
        this.status = status;
        this.field = field;
        this.reason = reason;
    }

    int status() {
        return status;
    }

    String field() {
        return field;
    }

    String reason() {
        return reason;
    }
}
