package io.samstream.config;

/**
 * Text from outside (a file's names and headers, a message's fields) made safe for a one-line error or
 * log message: control characters and Unicode's line and paragraph separators escaped Java-style
 * ({@code \n}, {@code \u0007}), the rest as it is.
 */
public final class OneLine {
    private OneLine() {}

    public static String of(String text) {
        if (text == null) {
            return "null";
        }
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
