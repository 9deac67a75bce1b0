package io.samstream.stream.engine;

import io.samstream.config.SafeText;

/**
 * The engine's short name for {@link SafeText#of}: text that came from outside (a record's key, a message's
 * fields, a stream's location) with credentials masked, cut (with its length) and escaped, so no value can
 * leak a secret, forge a log line or flood the log. One implementation: {@link SafeText}.
 */
public final class LogSafe {
    /** What a value is cut to by default. */
    public static final int MAX_CHARS = SafeText.MAX_CHARS;

    private LogSafe() {}

    /** {@code value} masked, escaped and cut to {@link #MAX_CHARS}; {@code "null"} for null. */
    public static String of(Object value) {
        return SafeText.of(value);
    }

    /** {@code value} masked, escaped and cut to {@code max} characters (then followed by "... (N chars)"). */
    public static String of(Object value, int max) {
        return SafeText.of(value, max);
    }
}
