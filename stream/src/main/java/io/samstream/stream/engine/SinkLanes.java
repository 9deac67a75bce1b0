package io.samstream.stream.engine;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The threads that hand records to the sinks. A stream always uses the same lane (its records are
 * accepted in frame order, and a sink's per-stream state, such as its open files, has one thread);
 * different streams' records are serialized and compressed at once on different lanes.
 */
final class SinkLanes implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SinkLanes.class);

    private final ExecutorService[] lanes;
    private final Thread[] threads;

    SinkLanes(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("sink threads must be at least 1, got " + count);
        }
        lanes = new ExecutorService[count];
        threads = new Thread[count];
        for (int i = 0; i < count; i++) {
            int lane = i;
            lanes[i] = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "samstream-sinks-" + lane);
                t.setDaemon(true);
                threads[lane] = t;
                return t;
            });
        }
    }

    /** The lane of a stream. */
    Executor of(String streamId) {
        return lanes[Math.floorMod(streamId.hashCode(), lanes.length)];
    }

    /** Runs {@code task} on the stream's lane and waits for it (at most {@code wait}); on the caller once closed. */
    void runOn(String streamId, Runnable task, Duration wait) {
        int lane = Math.floorMod(streamId.hashCode(), lanes.length);
        if (Thread.currentThread() == threads[lane]) {
            task.run();
            return;
        }
        Future<?> f;
        try {
            f = lanes[lane].submit(task);
        } catch (RejectedExecutionException stopped) {
            task.run(); // the lanes stopped (closing): nothing else calls the sinks any more
            return;
        }
        try {
            f.get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            log.warn("stream {}: a sink task failed: {}", LogSafe.of(streamId), Errors.describe(e.getCause()));
        } catch (TimeoutException e) {
            log.warn("stream {}: a sink task did not finish within {} s", LogSafe.of(streamId), wait.toSeconds());
        }
    }

    /** Stops the lanes after what they were given, waiting at most {@code wait}. */
    @Override
    public void close() {
        close(java.time.Duration.ofSeconds(10));
    }

    /** Lets the lanes finish what they were handed, waiting up to {@code timeout} in all. */
    public void close(java.time.Duration timeout) {
        for (ExecutorService lane : lanes) {
            lane.shutdown();
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            for (ExecutorService lane : lanes) {
                if (!lane.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    log.warn("closing: a sink thread did not stop in time");
                    break;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
