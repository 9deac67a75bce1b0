package io.samstream.gpu.cpu;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;

/**
 * A fixed set of daemon threads that run the independent tasks of one kernel call.
 *
 * <p>The calling thread works too, so {@code threads} is the total parallelism and a pool of one thread
 * runs everything inline. A call returns when all its tasks have finished; tasks are claimed from a shared
 * counter, so the caller alone can finish a call even when every worker is busy with another caller's
 * tasks (several streams may decode at once) and nested calls cannot deadlock.
 *
 * <p>Results never depend on the thread count: kernels split work into tasks of a fixed size and each
 * output element is written by exactly one task in a fixed order.
 */
public final class CpuThreadPool implements AutoCloseable {
    private static final AtomicInteger POOLS = new AtomicInteger();

    private final int threads;
    private final ExecutorService workers;

    public CpuThreadPool(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("a CPU backend needs at least one thread, got " + threads);
        }
        this.threads = threads;
        if (threads == 1) {
            this.workers = null;
        } else {
            int pool = POOLS.incrementAndGet();
            AtomicInteger n = new AtomicInteger();
            this.workers = Executors.newFixedThreadPool(threads - 1, r -> {
                Thread t = new Thread(r, "samstream-cpu-" + pool + "-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
        }
    }

    public int threads() {
        return threads;
    }

    /** Runs {@code body.accept(i)} for i in [0, tasks), in parallel, and waits for all of them. */
    public void forEach(int tasks, IntConsumer body) {
        if (tasks <= 0) {
            return;
        }
        if (workers == null || tasks == 1) {
            for (int i = 0; i < tasks; i++) {
                body.accept(i);
            }
            return;
        }
        Job job = new Job(tasks, body);
        int helpers = Math.min(threads - 1, tasks - 1);
        for (int h = 0; h < helpers; h++) {
            try {
                workers.execute(job::work);
            } catch (RejectedExecutionException e) {
                throw new IllegalStateException("the CPU backend was closed", e);
            }
        }
        job.work();
        job.awaitAndRethrow();
    }

    /** Splits [0, n) into chunks of {@code grain} and runs {@code body.run(start, end)} for each in parallel. */
    public void forRange(int n, int grain, RangeBody body) {
        int chunks = (n + grain - 1) / grain;
        forEach(chunks, c -> body.run(c * grain, Math.min(n, (c + 1) * grain)));
    }

    @FunctionalInterface
    public interface RangeBody {
        void run(int start, int end);
    }

    @Override
    public void close() {
        if (workers != null) {
            workers.shutdown();
        }
    }

    /** One call's tasks: a claim counter, a completion counter and the first failure. */
    private static final class Job {
        private final int tasks;
        private final IntConsumer body;
        private final AtomicInteger next = new AtomicInteger();
        private final AtomicInteger remaining;
        private final CountDownLatch done = new CountDownLatch(1);
        private final AtomicReference<Throwable> failure = new AtomicReference<>();

        Job(int tasks, IntConsumer body) {
            this.tasks = tasks;
            this.body = body;
            this.remaining = new AtomicInteger(tasks);
        }

        void work() {
            int i;
            while ((i = next.getAndIncrement()) < tasks) {
                try {
                    if (failure.get() == null) {
                        body.accept(i);
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                } finally {
                    if (remaining.decrementAndGet() == 0) {
                        done.countDown();
                    }
                }
            }
        }

        void awaitAndRethrow() {
            boolean interrupted = false;
            while (true) {
                try {
                    done.await();
                    break;
                } catch (InterruptedException e) {
                    // The tasks write into the caller's buffers: wait for them before returning.
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            Throwable t = failure.get();
            if (t instanceof RuntimeException re) {
                throw re;
            }
            if (t instanceof Error err) {
                throw err;
            }
            if (t != null) {
                throw new IllegalStateException(t);
            }
        }
    }
}
