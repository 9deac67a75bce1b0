package io.samstream.gpu.sam3.video;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * How a concept's step runs the frame's detection beside the propagation of its tracks: the two read the same frame
 * and nothing of each other until the matching, so with the tracker's passes on a GPU the detector's host work
 * (geometry encoder, scoring, thresholds, mask NMS) and its own device passes can run while the tracker's passes keep
 * the device busy. {@link #serial()} runs the detection on the caller's thread when its result is asked for (after
 * the propagation: the order the step had before, and what a profile that times the parts one at a time needs);
 * {@link #threads()} starts it at once on a helper thread. The results are the same either way: the detection and the
 * propagation share no state, and the parts are deterministic whatever thread runs them.
 */
final class Overlap implements AutoCloseable {
    private static final AtomicInteger NEXT_POOL = new AtomicInteger();

    /** The helper threads (created as streams need them, one per stream stepping at a time), or null: serial. */
    private final ExecutorService helpers;

    private Overlap(ExecutorService helpers) {
        this.helpers = helpers;
    }

    /** Work runs on the caller's thread, when {@link Pending#join} asks for it. */
    static Overlap serial() {
        return new Overlap(null);
    }

    /** Work starts at once on a helper thread (daemon threads, idle ones end after a minute). */
    static Overlap threads() {
        int pool = NEXT_POOL.incrementAndGet();
        AtomicInteger n = new AtomicInteger();
        ThreadFactory factory = r -> {
            Thread t = new Thread(r, "sam3-detect-" + pool + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        return new Overlap(Executors.newCachedThreadPool(factory));
    }

    boolean overlaps() {
        return helpers != null;
    }

    /** {@code work}, started now on a helper or deferred to {@link Pending#join}. */
    <T> Pending<T> start(Supplier<T> work) {
        if (helpers == null) {
            return new Pending<>(work, null);
        }
        return new Pending<>(null, helpers.submit(work::get));
    }

    /** Stops the helpers (a step still running keeps its thread until it ends). */
    @Override
    public void close() {
        if (helpers != null) {
            helpers.shutdown();
        }
    }

    /** A started (or deferred) piece of work. */
    static final class Pending<T> {
        private final Supplier<T> deferred;
        private final Future<T> running;

        private Pending(Supplier<T> deferred, Future<T> running) {
            this.deferred = deferred;
            this.running = running;
        }

        /** The work's result; its exception (unwrapped) when it failed. Waits for a helper's work to end. */
        T join() {
            if (running == null) {
                return deferred.get();
            }
            try {
                return uninterruptibly(running);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof RuntimeException r) {
                    throw r;
                }
                if (cause instanceof Error err) {
                    throw err;
                }
                throw new IllegalStateException(cause);
            }
        }

        /**
         * For a caller that failed before it joined: waits until a helper's work has ended (it reads the frame, which
         * the caller releases next) and adds its failure, if any, to {@code failure}; deferred work never runs.
         */
        void abandon(Throwable failure) {
            if (running == null) {
                return;
            }
            try {
                uninterruptibly(running);
            } catch (ExecutionException e) {
                failure.addSuppressed(e.getCause());
            }
        }

        /** The result, waiting through interrupts (the frame must not be released under the helper); re-flagged. */
        private static <T> T uninterruptibly(Future<T> f) throws ExecutionException {
            boolean interrupted = false;
            try {
                while (true) {
                    try {
                        return f.get();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
