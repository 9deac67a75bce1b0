package io.samstream.testkit;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * What every fuzz target asserts about one input: a valid result or one of the documented exceptions
 * with a one-line message, within {@link #TIME} and {@link #ALLOCATION}. Anything else fails the input:
 * another exception, an {@link Error} (OutOfMemoryError, StackOverflowError), a message that is empty or
 * spans lines, or a parse that takes too long or allocates too much. Shared by the modules' fuzz tests
 * (the testkit module, a test-scoped dependency).
 */
public final class FuzzBounds {
    /** Per input; generous for a loaded 2-core machine, far below a hang. */
    public static final Duration TIME = Duration.ofSeconds(10);
    /** Bytes one input may allocate on the parsing thread (fuzz inputs are a few kB). */
    public static final long ALLOCATION = 512L << 20;

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private FuzzBounds() {}

    /**
     * Runs {@code parse} on one input.
     *
     * @param clearErrors the exception types the parser documents for bad input
     * @return the result, or empty when it failed with a documented exception
     */
    @SafeVarargs
    public static <T> Optional<T> check(Callable<T> parse, Class<? extends Exception>... clearErrors) {
        Outcome<T> first = run(parse, clearErrors);
        Outcome<T> measured = first;
        if (first.millis() > TIME.toMillis() || first.allocated() > ALLOCATION) {
            // The first parse in a JVM loads the parser's classes on this thread (and under Jazzer with
            // library instrumentation, instruments them: seconds and gigabytes). That is not the input's
            // cost: the bounds apply to the same input parsed again.
            measured = run(parse, clearErrors);
        }
        if (measured.millis() > TIME.toMillis()) {
            throw new AssertionError("one input took " + measured.millis() + " ms, more than " + TIME.toMillis());
        }
        if (measured.allocated() > ALLOCATION) {
            throw new AssertionError("one input allocated " + measured.allocated() + " bytes, more than " + ALLOCATION);
        }
        return Optional.ofNullable(first.result());
    }

    private record Outcome<T>(T result, long millis, long allocated) {}

    @SafeVarargs
    private static <T> Outcome<T> run(Callable<T> parse, Class<? extends Exception>... clearErrors) {
        long bytes = THREADS.getCurrentThreadAllocatedBytes();
        long start = System.nanoTime();
        T result = null;
        try {
            result = parse.call();
            if (result == null) {
                throw new AssertionError("the parser returned null instead of a result or an error");
            }
        } catch (Exception e) {
            if (!documented(e, clearErrors)) {
                throw new AssertionError("not a documented error: " + e, e);
            }
            String message = e.getMessage();
            if (message == null || message.isBlank() || message.indexOf('\n') >= 0 || message.indexOf('\r') >= 0) {
                throw new AssertionError("the error's message is not one clear line: " + e.getClass().getName()
                        + ": " + message, e);
            }
        }
        return new Outcome<>(result, (System.nanoTime() - start) / 1_000_000,
                THREADS.getCurrentThreadAllocatedBytes() - bytes);
    }

    private static boolean documented(Exception e, Class<? extends Exception>[] types) {
        for (Class<? extends Exception> t : types) {
            if (t.isInstance(e)) {
                return true;
            }
        }
        return false;
    }

    /** A folder for the files a fuzz target writes its inputs to, deleted when the JVM exits. */
    public static java.nio.file.Path tempDir() {
        try {
            java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("samstream-fuzz-");
            dir.toFile().deleteOnExit();
            return dir;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
