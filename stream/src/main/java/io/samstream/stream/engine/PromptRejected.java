package io.samstream.stream.engine;

import java.util.Objects;

/**
 * A prompt message that was not applied: {@link #reason()} is a short fixed code (a metric tag),
 * the message says what was wrong in words.
 */
public final class PromptRejected extends Exception {
    /** The reason codes, one per kind of rejection. */
    public static final String MALFORMED_JSON = "malformed_json";
    public static final String UNKNOWN_OP = "unknown_op";
    public static final String MISSING_STREAM = "missing_stream";
    public static final String KEY_MISMATCH = "key_mismatch";
    public static final String MISSING_OBJECT = "missing_object";
    public static final String MISSING_PROMPT = "missing_prompt";
    public static final String BAD_POINT = "bad_point";
    public static final String BAD_LABEL = "bad_label";
    public static final String BAD_COORDINATE = "bad_coordinate";
    public static final String BAD_BOX = "bad_box";
    public static final String BAD_FRAME = "bad_frame";
    public static final String UNKNOWN_STREAM = "unknown_stream";
    public static final String OBJECT_EXISTS = "object_exists";
    public static final String UNKNOWN_OBJECT = "unknown_object";
    public static final String OUTSIDE_FRAME = "outside_frame";
    public static final String TOO_LARGE = "too_large";
    public static final String TOO_MANY_POINTS = "too_many_points";
    public static final String TOO_MANY_PENDING = "too_many_pending";
    /** A "frame" further ahead than samstream.limits.max-prompt-frame-ahead. */
    public static final String FRAME_TOO_FAR = "frame_too_far";
    /** An add past samstream.limits.max-objects-per-stream. */
    public static final String OBJECT_LIMIT = "object_limit";
    /** A change that would make its stream's state record larger than samstream.limits.max-state-bytes. */
    public static final String STATE_TOO_LARGE = "state_too_large";

    /** A concept op without a usable noun phrase ("text"), or one too long. */
    public static final String BAD_CONCEPT = "bad_concept";
    /** A concept the stream looks for already. */
    public static final String CONCEPT_EXISTS = "concept_exists";
    /** A remove-concept of a concept the stream does not look for. */
    public static final String UNKNOWN_CONCEPT = "unknown_concept";
    /** A concept past samstream.limits.max-concepts-per-stream. */
    public static final String CONCEPT_LIMIT = "concept_limit";
    /** An op the stream's model cannot take: concepts without SAM 3, object prompts with it. */
    public static final String WRONG_MODEL = "wrong_model";

    private final String reason;

    public PromptRejected(String reason, String message) {
        super(message, null, false, false);
        this.reason = Objects.requireNonNull(reason);
    }

    public String reason() {
        return reason;
    }
}
