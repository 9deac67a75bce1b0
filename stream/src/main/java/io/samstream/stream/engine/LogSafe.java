package io.samstream.stream.engine;

/**
 * Makes text that came from outside (a record's key, a message's fields) safe to log: control
 * characters are escaped (CR/LF as {@code \r}/{@code \n}, others as {@code \\uXXXX}), so no value can
 * forge a log line, and long values are cut, with their length, so none can flood the log. A backslash
 * stays as it is, so text made safe once is not changed again.
 */
public final class LogSafe {
    /** What a value is cut to by default. */
    public static final int MAX_CHARS = 200;

    private LogSafe() {}

    /** {@code value} escaped and cut to {@link #MAX_CHARS}; {@code "null"} for null. */
    public static String of(Object value) {
        return of(value, MAX_CHARS);
    }

    /** {@code value} escaped and cut to {@code max} characters (then followed by "... (N chars)"). */
    public static String of(Object value, int max) {
        if (value == null) {
            return "null";
        }
        String s = value.toString();
        int n = Math.min(s.length(), max);
        StringBuilder b = new StringBuilder(n + 16);
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    // C0/C1 controls and the Unicode line/paragraph separators.
                    if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        if (s.length() > max) {
            b.append("... (").append(s.length()).append(" chars)");
        }
        return b.toString();
    }
}
