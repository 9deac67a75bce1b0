package io.samstream.gpu.checkpoint;

import java.nio.file.Path;

/**
 * A checkpoint that cannot be used: unreadable, not a checkpoint, unsafe, or not a SAM model.
 * The message always names the file and what is wrong with it, so it can be shown to a user as is: it
 * is one line, whatever names the file holds (their control characters are escaped, {@code \n},
 * {@code \u0007}).
 */
public class CheckpointException extends RuntimeException {
    public CheckpointException(Path file, String problem) {
        super(file + ": " + oneLine(problem));
    }

    public CheckpointException(Path file, String problem, Throwable cause) {
        super(file + ": " + oneLine(problem), cause);
    }

    /** Control characters (and Unicode's line and paragraph separators) escaped Java-style. */
    static String oneLine(String text) {
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
            if (out != null) {
                switch (c) {
                    case '\n' -> out.append("\\n");
                    case '\r' -> out.append("\\r");
                    case '\t' -> out.append("\\t");
                    default -> {
                        if (control) {
                            out.append(String.format("\\u%04x", (int) c));
                        } else {
                            out.append(c);
                        }
                    }
                }
            }
        }
        return out == null ? text : out.toString();
    }
}
