package io.samstream.stream.engine;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * Runs tasks one after the other, in the order they were submitted, on a shared executor: no thread of
 * its own, and no task waits for another while holding a thread (the next one is only queued when the
 * previous one finished). One stream's decoding goes through its lane, so its frames are tracked in
 * order, while other streams' lanes run on the same pool at the same time.
 */
final class SerialLane {
    private CompletableFuture<?> tail = CompletableFuture.completedFuture(null);

    /** Runs {@code task} on {@code executor} after every task submitted before it ended (normally or not). */
    synchronized <T> CompletableFuture<T> submit(Supplier<T> task, Executor executor) {
        CompletableFuture<T> next = tail.handle((v, e) -> null).thenApplyAsync(v -> task.get(), executor);
        tail = next;
        return next;
    }
}
