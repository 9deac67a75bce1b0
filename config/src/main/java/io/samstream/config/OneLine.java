package io.samstream.config;

/**
 * Text from outside (a file's names and headers, a message's fields) made safe for a one-line error or
 * log message: control characters and Unicode's line and paragraph separators escaped Java-style
 * ({@code \n}, {@code \u0007}), credentials in URLs masked ({@link SafeText#maskCredentials}), the rest as it is.
 */
public final class OneLine {
    private OneLine() {}

    /** {@code text} with credentials masked and control characters escaped. */
    public static String of(String text) {
        return text == null ? "null" : escape(SafeText.maskCredentials(text));
    }

    /** Control characters escaped, nothing else changed. */
    static String escape(String text) {
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean control = Character.isISOControl(c) || c == '\u2028' || c == '\u2029';
            if (control && out == null) {
                out = new StringBuilder(text.length() + 16).append(text, 0, i);
            }
            if (out == null) {
                continue;
            }
            switch (c) {
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> out.append(control ? String.format("\\u%04x", (int) c) : String.valueOf(c));
            }
        }
        return out == null ? text : out.toString();
    }
}
