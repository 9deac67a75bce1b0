package io.samstream.stream.engine;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** One line for a log or a user: the innermost message that says something. */
final class Errors {
    private Errors() {}

    static String describe(Throwable e) {
        Throwable t = e;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        String m = t.getMessage();
        return (m == null || m.isBlank() ? t.getClass().getSimpleName() : m).replace('\n', ' ');
    }
}
