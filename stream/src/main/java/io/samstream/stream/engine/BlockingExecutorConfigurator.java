package io.samstream.stream.engine;

import akka.dispatch.DispatcherPrerequisites;
import akka.dispatch.ExecutorServiceConfigurator;
import akka.dispatch.ExecutorServiceFactory;
import akka.dispatch.MonitorableThreadFactory;
import com.typesafe.config.Config;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The executor of the engine's blocking dispatcher (sources that block in FFmpeg while they read): a thread for
 * each task that finds no idle one, up to {@code max-threads}, idle threads reused first and let go after a
 * minute; past the bound, tasks wait in the queue. Akka's own thread-pool-executor makes a new thread for every
 * task until its core size even while others idle, so a single stream's reads filled a 256-thread pool within
 * seconds.
 */
public final class BlockingExecutorConfigurator extends ExecutorServiceConfigurator {
    static final long KEEP_ALIVE_SECONDS = 60;
    private final int maxThreads;

    public BlockingExecutorConfigurator(Config config, DispatcherPrerequisites prerequisites) {
        super(config, prerequisites);
        this.maxThreads = config.hasPath("max-threads") ? config.getInt("max-threads") : 256;
        if (maxThreads < 1) {
            throw new IllegalArgumentException("blocking dispatcher: max-threads must be at least 1, got " + maxThreads);
        }
    }

    @Override
    public ExecutorServiceFactory createExecutorServiceFactory(String id, ThreadFactory threadFactory) {
        // Threads named after the dispatcher, as Akka's own executors name theirs (thread dumps, StreamBench's CPU).
        ThreadFactory named = threadFactory instanceof MonitorableThreadFactory m ? m.withName(m.name() + "-" + id)
                : threadFactory;
        return () -> newExecutor(maxThreads, named);
    }

    /** The executor: grows only when no thread is idle, up to {@code maxThreads}; then tasks queue. */
    static ThreadPoolExecutor newExecutor(int maxThreads, ThreadFactory threadFactory) {
        return new IdleFirstExecutor(maxThreads, threadFactory, new IdleFirstQueue());
    }

    /**
     * Counts the tasks given and not yet finished, so that its queue can tell whether a thread is free for the next
     * one (the pool's own active count lags behind: a thread that took a task a moment ago may not count yet).
     */
    private static final class IdleFirstExecutor extends ThreadPoolExecutor {
        final AtomicInteger unfinished = new AtomicInteger();

        IdleFirstExecutor(int maxThreads, ThreadFactory threadFactory, IdleFirstQueue queue) {
            super(0, maxThreads, KEEP_ALIVE_SECONDS, TimeUnit.SECONDS, queue, threadFactory, (task, executor) -> {
                if (executor.isShutdown()) {
                    throw new RejectedExecutionException("the blocking dispatcher is shut down");
                }
                queue.force(task); // at the bound: the task waits for a thread
            });
            queue.executor = this;
        }

        @Override
        public void execute(Runnable task) {
            unfinished.incrementAndGet();
            try {
                super.execute(task);
            } catch (RuntimeException | Error e) {
                unfinished.decrementAndGet();
                throw e;
            }
        }

        @Override
        protected void afterExecute(Runnable task, Throwable error) {
            unfinished.decrementAndGet();
        }
    }

    /**
     * Refuses a task (so the executor starts a thread for it) while the pool can grow and every thread has a task;
     * otherwise queues it for the next free thread.
     */
    private static final class IdleFirstQueue extends LinkedBlockingQueue<Runnable> {
        private volatile IdleFirstExecutor executor;

        @Override
        public boolean offer(Runnable task) {
            IdleFirstExecutor e = executor;
            if (e != null && e.getPoolSize() < e.getMaximumPoolSize() && e.unfinished.get() > e.getPoolSize()) {
                return false;
            }
            return super.offer(task);
        }

        void force(Runnable task) {
            super.offer(task);
        }
    }
}
