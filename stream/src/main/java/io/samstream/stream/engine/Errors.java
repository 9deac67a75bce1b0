package io.samstream.stream.engine;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** One line for a log or a user: the innermost message that says something. */
final class Errors {
    /** Longer messages are cut (with their length). */
    static final int MAX_CHARS = 2000;

    private Errors() {}

    static String describe(Throwable e) {
        Throwable t = e;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        String m = t.getMessage();
        // Messages can quote what a record held: line breaks become spaces, other control characters are
        // escaped and very long messages cut (LogSafe).
        return m == null || m.isBlank() ? t.getClass().getSimpleName() : LogSafe.of(m.replace('\n', ' '), MAX_CHARS);
    }
}
