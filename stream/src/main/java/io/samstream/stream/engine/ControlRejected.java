package io.samstream.stream.engine;

import io.samstream.config.OneLine;
import java.util.Objects;

/**
 * A record of the streams or state topic that is not acted on: {@link #reason()} is a short fixed code (a metric
 * tag), the message says what was wrong in words, on one line: it may quote the record (a field name, a value), so
 * its control characters are escaped and credentials masked ({@link OneLine}).
 */
public final class ControlRejected extends Exception {
    /** Not the record's format: not JSON, a field missing or of the wrong type. */
    public static final String MALFORMED = "malformed";
    /** Larger than its limit (max-definition-bytes, max-state-bytes). */
    public static final String TOO_LARGE = "too_large";
    /** The key is no valid stream id, or the value names another stream. */
    public static final String BAD_KEY = "bad_key";
    /** A frame number outside [-1, max-stream-frames] (a state). */
    public static final String BAD_FRAME = "bad_frame";
    /** More objects or tracks than max-objects-per-stream. */
    public static final String TOO_MANY_OBJECTS = "too_many_objects";
    /** More prompt snapshots than max-pending-changes (a state). */
    public static final String TOO_MANY_PENDING = "too_many_pending";
    /** A stream definition that is no valid definition (its error says which key). */
    public static final String BAD_DEFINITION = "bad_definition";
    /** A file's state that claims more frames than the file holds. */
    public static final String FRAME_BEYOND_END = "frame_beyond_end";
    /** Anything else that went wrong with one record. */
    public static final String ERROR = "error";

    private final String reason;

    public ControlRejected(String reason, String message) {
        super(OneLine.of(message), null, false, false);
        this.reason = Objects.requireNonNull(reason);
    }

    public ControlRejected(String reason, String message, Throwable cause) {
        super(OneLine.of(message), cause, false, false);
        this.reason = Objects.requireNonNull(reason);
    }

    public String reason() {
        return reason;
    }
}
