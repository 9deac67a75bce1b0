package io.samstream.stream.app;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes one part of a shutdown within its share of {@code samstream.shutdown-timeout}: on a daemon thread of its
 * own, waited for until its share ends. Past it the shutdown goes on without it (the close finishes, or not, on its
 * own; the process exits anyway), so no one part can hold the exit back.
 */
final class BoundedClose {
    private static final Logger log = LoggerFactory.getLogger(BoundedClose.class);

    /** A close that may throw. */
    @FunctionalInterface
    interface Step {
        void close() throws Exception;
    }

    private BoundedClose() {}

    /** @return true when it closed (or failed) in time, false when the shutdown went on without it */
    static boolean run(String what, Step step, Duration within) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                step.close();
                done.complete(null);
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        }, "samstream-close");
        t.setDaemon(true);
        t.start();
        try {
            done.get(Math.max(1, within.toMillis()), TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            log.warn("closing {}: not done in its share of samstream.shutdown-timeout ({} ms), going on without it",
                    what, within.toMillis());
            return false;
        } catch (ExecutionException e) {
            log.warn("closing {}: {}", what, String.valueOf(e.getCause()));
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
