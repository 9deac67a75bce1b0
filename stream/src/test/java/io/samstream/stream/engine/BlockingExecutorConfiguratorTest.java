package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class BlockingExecutorConfiguratorTest {
    @Test
    void blockingTasksEachGetAThreadUpToTheBoundAndIdleThreadsAreReused() throws Exception {
        ThreadPoolExecutor e = BlockingExecutorConfigurator.newExecutor(8, Executors.defaultThreadFactory());
        try {
            // Short tasks one after the other, each given once the thread before it is idle again: the idle thread
            // does them all (a fixed-size pool would start 200). Waiting for idleness, not only for the task's
            // result, keeps the test exact: a future completes a moment before its thread counts as free, and a
            // task given in that moment rightly gets a new thread.
            for (int i = 0; i < 200; i++) {
                e.submit(() -> { }).get(5, TimeUnit.SECONDS);
                awaitIdle(e);
            }
            assertEquals(1, e.getPoolSize(), "idle threads are reused");

            // Ten tasks that block together: eight run at once (the bound), the other two wait and then run.
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch started = new CountDownLatch(8);
            AtomicInteger done = new AtomicInteger();
            for (int i = 0; i < 10; i++) {
                e.execute(() -> {
                    started.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                    done.incrementAndGet();
                });
            }
            assertTrue(started.await(5, TimeUnit.SECONDS), "eight blocking tasks run at once");
            assertEquals(8, e.getPoolSize());
            assertEquals(2, e.getQueue().size(), "past the bound, tasks wait");
            release.countDown();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (done.get() < 10 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(10, done.get(), "the waiting tasks ran too");
            assertEquals(8, e.getPoolSize(), "never more threads than the bound");
        } finally {
            e.shutdownNow();
        }
    }

    private static void awaitIdle(ThreadPoolExecutor e) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (e.getActiveCount() > 0) {
            assertTrue(System.nanoTime() < deadline, "the pool's thread never became idle");
            Thread.sleep(1);
        }
    }
}
